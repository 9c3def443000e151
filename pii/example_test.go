package pii_test

import (
	"fmt"

	"github.com/convengine/engine/pii"
)

func Example() {
	det, err := pii.New(&pii.Options{
		Patterns: []pii.Pattern{{Kind: pii.Account, Name: "routing", Regexp: `\b\d{9}\b`}},
	})
	if err != nil {
		panic(err)
	}
	text := "Pay 1 234,56 € from card 4111 1111 1111 1111 to GB82 WEST 1234 5698 7654 32, routing 021000021."
	for _, m := range det.Find(text) {
		fmt.Printf("%s %s %q -> %s\n", m.Kind, m.Name, text[m.Start:m.End], det.Mask(m, 4))
	}
	// Output:
	// card card "4111 1111 1111 1111" -> •••• 1111
	// iban iban "GB82 WEST 1234 5698 7654 32" -> GB•• •••• … 5432
	// account routing "021000021" -> •••• 0021
}

// Digits said as words in a transcript are read, and the match covers the words.
func Example_spoken() {
	det, err := pii.New(&pii.Options{Locales: []string{"en", "fr"}})
	if err != nil {
		panic(err)
	}
	text := "c'est le quatre un un un, un un un un, un un un un, un un un un, merci"
	for _, m := range det.Find(text) {
		fmt.Printf("%s %s %q\n", m.Kind, m.Value, text[m.Start:m.End])
	}
	// Output:
	// card 4111111111111111 "quatre un un un, un un un un, un un un un, un un un un"
}
