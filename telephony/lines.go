package telephony

import (
	"fmt"

	"github.com/convengine/engine"
)

// What the phone says of its own, in English: the tenant's answers come in the caller's
// language from the model, these are the line's.
const (
	sayWelcome      = "Welcome to %s. Please enter your PIN on the keypad, then press the pound key."
	sayPINAgain     = "That PIN didn't match. Please enter it again, then press the pound key."
	sayPINMissing   = "I didn't get your PIN. Please enter it on the keypad, then press the pound key."
	sayVerified     = "Thank you. How can I help you today?"
	sayNotVerified  = "I couldn't verify you. Please call again later. Goodbye."
	sayNoVerifier   = "Sorry, I can't verify callers right now. Please call again later. Goodbye."
	sayBusy         = "Sorry, all our lines are busy. Please call again in a few minutes. Goodbye."
	sayConfirmPIN   = "To confirm, enter your PIN, then press the pound key. To cancel, press the star key."
	sayConfirmInApp = "For your security, please confirm this in the %s app. I can't do it on the phone."
	sayCancelled    = "All right, I cancelled it. Nothing was sent."
	sayConfirmWrong = "That PIN didn't match, so nothing was done."
	sayActionFailed = "Sorry, that couldn't be done just now. Nothing was sent."
	sayTurnRefused  = "Sorry, I can't answer right now. Please try again in a moment."
	sayNotHeard     = "Sorry, I didn't catch that. Please say it again."
	sayClosing      = "This line is closing for maintenance. Please call again in a moment. Goodbye."
)

// greetingText is what a call hears first: the tenant's AI disclosure, its welcome and the
// PIN's prompt.
func greetingText(t *engine.Tenant) string {
	text := fmt.Sprintf(sayWelcome, name(t))
	if d := disclosure(t); d != "" {
		text = d + " " + text
	}
	return text
}

func name(t *engine.Tenant) string {
	if t.Name != "" {
		return t.Name
	}
	return "our bank"
}

// disclosure is the tenant's AI disclosure in its language: its locale, else the locale's
// language, else English.
func disclosure(t *engine.Tenant) string {
	if len(t.Disclosure) == 0 {
		return ""
	}
	loc := t.Locale
	if d, ok := t.Disclosure[loc]; ok {
		return d
	}
	for i := range len(loc) {
		if loc[i] == '-' || loc[i] == '_' {
			if d, ok := t.Disclosure[loc[:i]]; ok {
				return d
			}
			break
		}
	}
	return t.Disclosure["en"]
}
