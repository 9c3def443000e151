package intent_test

import (
	"encoding/json"
	"fmt"

	"github.com/convengine/engine/intent"
)

func ExampleGrammar() {
	config := json.RawMessage(`{
	  "fallback": "help",
	  "intents": [
	    {"name": "balance", "examples": ["what's my balance"],
	     "responses": {"en": {"speak": "You have $12."}}},
	    {"name": "transfer", "patterns": ["\\bsend\\s+(?P<amount>.+?)\\s+to\\s+(?P<to>\\pL+)"],
	     "slots": {"amount": {"type": "amount", "required": true},
	               "to": {"type": "name", "values": ["Alex", "Sam"], "required": true}},
	     "responses": {"en": {"speak": "Sending {slots.amount} to {slots.to}.", "ask": "To whom?"}}},
	    {"name": "help", "examples": ["help"], "responses": {"en": {"speak": "Ask me."}}}
	  ]}`)
	grammar, err := intent.Grammar(config, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Print(grammar)
	// Output:
	// #JSGF V1.0;
	// grammar intents;
	//
	// public <utterance> = <intent_balance> | <intent_transfer> | <intent_help>;
	// <intent_balance> = (what's | what is) my balance;
	// <digit> = one | two | three | four | five | six | seven | eight | nine;
	// <teen> = ten | eleven | twelve | thirteen | fourteen | fifteen | sixteen | seventeen | eighteen | nineteen;
	// <tens> = twenty | thirty | forty | fifty | sixty | seventy | eighty | ninety;
	// <below_hundred> = <digit> | <teen> | <tens> [<digit>];
	// <below_thousand> = <below_hundred> | [a | <digit>] hundred [[and] <below_hundred>];
	// <number> = zero | <below_thousand> | [<below_thousand>] thousand [[and] <below_thousand>];
	// <slot_transfer_amount> = <number> [dollars | dollar | bucks] [and <below_hundred> (cents | cent)] | <below_hundred> (cents | cent);
	// <slot_transfer_to> = alex | sam;
	// <intent_transfer> = send <slot_transfer_amount> to <slot_transfer_to>;
	// <intent_help> = help;
}
