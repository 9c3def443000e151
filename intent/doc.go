// Package intent is the offline, rule-based [engine.Model]: the engine's embedded default and
// the deterministic model of its tests. It needs no network and no language model, yet it
// speaks through the same interface as one: it asks for data tools, reads their results on the
// next call, then streams its answer word by word and calls the UI tools for widgets, a
// follow-up line and suggestions. The examples are the best way in; [Model] is the type to
// plug into the engine, [Compile] and [Config.Match] help to write and debug a configuration.
//
// # How a turn is answered
//
// Each tenant configures the model in the "intents" key of its tenant file ([engine.Tenant]
// Intents). [Model.Stream] compiles it on first use and then, on every call:
//
//  1. finds the last user message (in [engine.ModeHome] there is none: the home intent
//     answers) and the messages of the turn after it;
//  2. finishes at once if the turn already holds text or a UI or action call;
//  3. classifies the message: a pattern (regular expression) that matches scores 1, and
//     otherwise the message is compared with each example by a cosine of word sets, where
//     words are lower-cased, stripped of accents and punctuation, contractions are expanded
//     ("what's" is "what is"), plurals folded, numbers made alike and near spellings
//     ("balence") count for most of a match, and stop words ("my", "the", "de") weigh a
//     fifth of other words. Below the threshold the fallback intent answers;
//  4. reads the intent's slots, from the pattern's named groups or else from the whole
//     message. When a required slot is missing it says the "ask" copy. A reply to that
//     question ("20 dollars") that matches nothing better fills the slots of the intent asked,
//     also over several replies ("send money", "to Jordan", "30 dollars"; up to four);
//  5. calls the intent's data tools that have no result yet, all in one step so that the
//     engine runs them in parallel, and finishes with [engine.FinishToolCalls];
//  6. with all results in, says the "speak" copy (or "voice" in [engine.ModeVoice]) in
//     deltas, then calls the action tool if the intent has one (the engine turns it into a
//     confirm widget), the UI tools of its widgets, set_follow and set_suggestions, and
//     finishes with [engine.FinishStop]. If a tool failed it says the "error" copy instead.
//
// The model only calls tools the request offers: a data or action tool missing from
// ModelRequest.Tools makes the intent say its error copy, a missing UI tool is left out.
// Tool call IDs are "call_<intent>_<n>_<step>", unique within a turn.
//
// # Configuration
//
// The configuration is JSON (tenant files are YAML turned into JSON, so keys are snake_case).
// Top-level keys:
//
//	threshold       similarity below which the fallback answers, above 0 and at most 1 (0.5)
//	fallback        the intent for anything else (default: the intent named "fallback")
//	home            the intent of ModeHome (default: the intent named "home", else fallback)
//	max_list_items  rows a list widget shows unless it sets its own limit (5, at most 50)
//	stop_words      words to weigh down in matching, added to the built-in English, Spanish
//	                and Arabic ones
//	error           per-locale copy said when a tool fails and the intent has no error copy
//	intents         the intents, tried in order; on equal scores the first wins
//
// Each intent has:
//
//	name       letters, digits, "_" and "-"; used in call IDs
//	examples   phrases that mean the intent, in any language
//	patterns   RE2 regular expressions, matched case-insensitively anywhere in the message;
//	           named groups ((?P<to>\pL+)) capture the slots of the same name
//	slots      by name: type, required, for name and enum slots values and synonyms, for
//	           amount and number slots max (a larger value leaves the slot unfilled)
//	tools      data tools called together: name and arguments
//	action     one action tool called with the answer: name and arguments
//	responses  the copy, by BCP 47 locale
//
// Slot types and the JSON values they give:
//
//	amount  a sum of money: "20", "$20", "20 dollars", "20.50", "twenty", "one hundred and
//	        five", "fifteen dollars and fifty cents", "veinte dólares con cincuenta
//	        centavos" (Spanish words, without "once", "un" and "una", which are English or
//	        articles more often than numbers); a number of whole cents. Money is
//	        never guessed: "20.505", "four hundred cents" or cents of a hundred or more after
//	        dollars leave the slot unfilled, as does an amount of nothing
//	number  a number in digits or English or Spanish words; a number
//	name    one word, title-cased ("alex" gives "Alex"); with values, only one of them (or of
//	        their synonyms), case-insensitively, in its configured spelling; a string. A name
//	        without values is only read from a pattern group
//	date    "today", "yesterday", "tomorrow", an ISO date or a weekday (the latest such day
//	        on or before today), also in Spanish and Arabic; a string "2006-01-02" relative
//	        to [Options].Now
//	enum    one of values or their synonyms; a string
//
// Arguments of tools and actions are JSON values. A string is a template; a string that is a
// single placeholder, such as "{slots.amount}", keeps the type of its value and is left out
// when the slot is missing, so an optional argument can come from an optional slot.
//
// A response (the copy of one locale) has:
//
//	speak        the answer, streamed word by word
//	voice        the answer in ModeVoice, if it should differ
//	ask          said instead when a required slot is missing (needed if a slot is required)
//	error        said when a tool failed
//	follow       the follow-up line (set_follow)
//	suggestions  up to eight replies the user can tap (set_suggestions)
//	widgets      UI tool calls, in order, each one of:
//	             stat:     label, value, delta (show_stat)
//	             progress: label, value: a path to a number from 0 to 1 (show_progress)
//	             list:     title, items_from: a path to an array, limit, and item: title,
//	                       subtitle, trailing, whose placeholders name the fields of each
//	                       element (show_list)
//	             tool:     name and arguments, as a tool call's: a UI tool of the host's own
//	                       widget types (engine.WidgetType, such as show_card), whose schema
//	                       the engine checks
//
// The response of a request's locale is found by [engine.LocaleFallbacks] ("es-MX", then
// "es"), then by those of the tenant's locale; failing both, the first locale in tag order.
//
// # Templates
//
// Copy is text with placeholders in braces. A placeholder is a path, then optional filters:
// {slots.to}, {results.get_balance.formatted}, {results.list_transactions.transactions.0.merchant},
// {slots.amount|money}. Paths start at slots.<slot>, results.<tool> (the decoded JSON result
// of a data tool of the intent; array elements by index) or, in error copy, error.tool,
// error.error and error.message (taken from the failed result). Compile rejects a path to a
// slot or tool the intent does not have. A path that names nothing renders empty; a widget
// left without its label or value is not shown, and a suggestion or follow-up line whose
// placeholders name nothing is left out. "{{" and "}}" write braces.
//
// Filters: money (two decimals and thousands separators, like the engine's confirm copy:
// "${slots.amount|money}" gives "$1,234.50"; money:€ puts the symbol after the sign, giving
// "-€4.00"), percent (0.65 gives "65%"), number (thousands separators), upper, lower, title,
// and default:text for an empty value. Prefer the formatted values a backend returns.
//
// # Example
//
// In YAML, as in a tenant file (templates that start with "{" must be quoted):
//
//	threshold: 0.5
//	fallback: help
//	error:
//	  en: Sorry, I couldn't reach the bank just now.
//	intents:
//	  - name: balance
//	    examples: ["what's my balance", how much money do I have]
//	    slots:
//	      account: {type: enum, values: [checking, savings]}
//	    tools:
//	      - name: get_balance
//	        arguments: {account: "{slots.account}"}
//	    responses:
//	      en:
//	        speak: Your {results.get_balance.name} balance is {results.get_balance.formatted}.
//	        suggestions: [Show my recent transactions]
//	        widgets:
//	          - stat:
//	              label: "{results.get_balance.name}"
//	              value: "{results.get_balance.formatted}"
//	              delta: "{results.get_balance.change}"
//	      es:
//	        speak: Tu saldo de {results.get_balance.name} es {results.get_balance.formatted}.
//	  - name: transactions
//	    examples: [show me my recent transactions, what did I spend recently]
//	    tools:
//	      - name: list_transactions
//	        arguments: {limit: 5}
//	    responses:
//	      en:
//	        speak: Here are your latest transactions.
//	        widgets:
//	          - list:
//	              title: Recent transactions
//	              items_from: results.list_transactions.transactions
//	              item: {title: "{merchant}", subtitle: "{date}", trailing: "{formatted}"}
//	  - name: savings_goal
//	    examples: [how am I doing on my savings goal]
//	    tools: [{name: get_savings_goal}]
//	    responses:
//	      en:
//	        speak: You're {results.get_savings_goal.percent} of the way there.
//	        widgets:
//	          - progress:
//	              label: "{results.get_savings_goal.name}"
//	              value: results.get_savings_goal.progress
//	  - name: transfer
//	    examples: [send money]
//	    patterns: ['\b(?:send|transfer)\s+(?P<amount>.+?)\s+to\s+(?P<to>\pL+)']
//	    slots:
//	      amount: {type: amount, required: true}
//	      to: {type: name, values: [Alex, Jordan, Sam, Taylor], required: true}
//	    action:
//	      name: transfer
//	      arguments: {amount: "{slots.amount}", to: "{slots.to}", currency: USD}
//	    responses:
//	      en:
//	        speak: I can send ${slots.amount|money} to {slots.to}. Please confirm.
//	        ask: How much would you like to send, and to whom?
//	  - name: home
//	    tools: [{name: get_balance}, {name: get_savings_goal}]
//	    responses:
//	      en:
//	        speak: Hi! Your balance is {results.get_balance.formatted}.
//	        suggestions: [Show my recent transactions]
//	  - name: help
//	    examples: [help, what can you do]
//	    responses:
//	      en:
//	        speak: I can check your balance, show recent transactions, track your savings goal, or send money.
//
// The demo bank's complete configuration, in English, Spanish and Arabic, is
// examples/demobank/intents.yaml.
//
// # Validation and caching
//
// [Compile] reports every problem at once, each with the path of its field
// ("intents[2].patterns[0]: invalid regexp: …"). [Model.Check] also checks a configuration
// against its tenant (copy in the tenant's locale, actions on the allow-list) and is meant for
// load time. A Model compiles each tenant's configuration once, on first use, and keeps it for
// as long as the *engine.Tenant is reachable; an invalid configuration makes Stream yield the
// error of Compile.
package intent
