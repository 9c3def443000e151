package main

// Kinds of utterance. Demo phrases are what the tenant was written for, so they measure the
// recogniser; paraphrases measure how far a user can stray from them; off-topic requests
// measure what the grammar makes of speech it has no phrase for.
const (
	kindDemo       = "demo"
	kindParaphrase = "paraphrase"
	kindOffTopic   = "offtopic"
)

// Expected intents. intentNone is an off-topic request: the right answer takes no action.
const (
	intentBalance      = "balance"
	intentTransactions = "transactions"
	intentSavings      = "savings_goal"
	intentTransfer     = "transfer"
	intentHome         = "home"
	intentHelp         = "help"
	intentNone         = "none"
)

// Utterance is one thing a user says and what the engine should make of it.
type Utterance struct {
	Text   string `json:"text"`
	Kind   string `json:"kind"`
	Intent string `json:"intent"`
	// Cents and To are a transfer's arguments; a transfer without them ("send money") should
	// be answered with the question for them, never with a confirm.
	Cents int64  `json:"cents,omitempty"`
	To    string `json:"to,omitempty"`
	// Quick puts the utterance in the -quick subset.
	Quick bool `json:"-"`
}

// complete reports whether u is a transfer that names both its amount and its payee.
func (u Utterance) complete() bool { return u.Intent == intentTransfer && u.Cents > 0 && u.To != "" }

func demo(intent, text string) Utterance {
	return Utterance{Text: text, Kind: kindDemo, Intent: intent}
}

func para(intent, text string) Utterance {
	return Utterance{Text: text, Kind: kindParaphrase, Intent: intent}
}

func offTopic(text string) Utterance {
	return Utterance{Text: text, Kind: kindOffTopic, Intent: intentNone}
}

func transfer(kind, text string, cents int64, to string) Utterance {
	return Utterance{Text: text, Kind: kind, Intent: intentTransfer, Cents: cents, To: to}
}

func quick(u Utterance) Utterance { u.Quick = true; return u }

// utterances are the English phrases of examples/demobank/intents.yaml, the transfers its
// suggestions invite, paraphrases a user might say instead, and requests the demo bank has no
// answer for. Texts are written as spoken, numbers in words, since that is what the
// synthesizers read and what the recogniser's grammar hears.
var utterances = []Utterance{
	// balance, as in intents.yaml
	quick(demo(intentBalance, "what's my balance")),
	demo(intentBalance, "what is my balance"),
	demo(intentBalance, "what is my account balance"),
	quick(demo(intentBalance, "how much money do i have")),
	demo(intentBalance, "how much is in my account"),
	demo(intentBalance, "check my balance"),
	demo(intentBalance, "show my balance"),
	demo(intentBalance, "balance please"),
	demo(intentBalance, "what's my savings balance"),
	// transactions
	demo(intentTransactions, "show me my recent transactions"),
	quick(demo(intentTransactions, "show my recent transactions")),
	demo(intentTransactions, "what did i spend recently"),
	demo(intentTransactions, "recent transactions"),
	demo(intentTransactions, "my latest purchases"),
	demo(intentTransactions, "where did i spend money"),
	demo(intentTransactions, "list my transactions"),
	// savings_goal
	demo(intentSavings, "how am i doing on my savings goal"),
	quick(demo(intentSavings, "how's my savings goal")),
	demo(intentSavings, "savings goal progress"),
	demo(intentSavings, "how close am i to my goal"),
	demo(intentSavings, "how close am i to my savings goal"),
	demo(intentSavings, "how much have i saved"),
	// transfer: the examples name no amount, so the right answer asks for it
	demo(intentTransfer, "send money"),
	demo(intentTransfer, "transfer money to a friend"),
	quick(demo(intentTransfer, "send money to alex")),
	demo(intentTransfer, "pay someone"),
	demo(intentTransfer, "make a transfer"),
	// transfer: the patterns, with an amount and a payee
	quick(transfer(kindDemo, "send twenty dollars to alex", 2000, "Alex")),
	quick(transfer(kindDemo, "pay taylor fifteen dollars", 1500, "Taylor")),
	quick(transfer(kindDemo, "transfer forty five dollars to sam", 4500, "Sam")),
	quick(transfer(kindDemo, "send twelve dollars and fifty cents to jordan", 1250, "Jordan")),
	transfer(kindDemo, "send one hundred dollars to jordan", 10000, "Jordan"),
	transfer(kindDemo, "transfer sixty dollars to taylor", 6000, "Taylor"),
	transfer(kindDemo, "give eight dollars to sam", 800, "Sam"),
	transfer(kindDemo, "pay alex thirty two dollars", 3200, "Alex"),
	// home
	quick(demo(intentHome, "give me an overview")),
	demo(intentHome, "overview"),
	// help
	quick(demo(intentHelp, "help")),
	demo(intentHelp, "what can you do"),
	demo(intentHelp, "what can i ask you"),

	// paraphrases
	quick(para(intentBalance, "tell me my balance")),
	para(intentBalance, "what is my current balance"),
	para(intentBalance, "how much is in my checking account"),
	para(intentBalance, "do i have any money left"),
	quick(para(intentTransactions, "what have i bought lately")),
	para(intentTransactions, "show me my last purchases"),
	para(intentTransactions, "what did i spend money on"),
	quick(para(intentSavings, "how am i doing on my savings")),
	para(intentSavings, "how is my savings goal going"),
	para(intentSavings, "am i close to my goal"),
	quick(transfer(kindParaphrase, "can you move thirty dollars to alex please", 3000, "Alex")),
	transfer(kindParaphrase, "please send ten dollars to taylor", 1000, "Taylor"),
	transfer(kindParaphrase, "i want to pay jordan twenty five dollars", 2500, "Jordan"),
	transfer(kindParaphrase, "wire fifty dollars to sam", 5000, "Sam"),
	transfer(kindParaphrase, "send alex twenty dollars", 2000, "Alex"),
	para(intentHome, "give me a summary of my accounts"),
	para(intentHelp, "how can you help me"),
	para(intentHelp, "what can i do here"),

	// off-topic: no action is the right answer
	quick(offTopic("what's the weather tomorrow")),
	quick(offTopic("tell me a joke")),
	offTopic("book a table for two"),
	quick(offTopic("play some music")),
	offTopic("set an alarm for seven in the morning"),
	offTopic("what time is it"),
	offTopic("call my mother"),
	offTopic("turn on the lights"),
	offTopic("who won the game last night"),
	offTopic("order a large pizza"),
	offTopic("remind me to buy milk"),
	offTopic("what is the capital of france"),
	// near misses: a payee's name or money words without a transfer
	quick(offTopic("send a message to alex")),
	offTopic("call taylor in twenty minutes"),
}

// selectUtterances returns the -quick subset, or every utterance.
func selectUtterances(quickOnly bool) []Utterance {
	if !quickOnly {
		return utterances
	}
	var out []Utterance
	for _, u := range utterances {
		if u.Quick {
			out = append(out, u)
		}
	}
	return out
}
