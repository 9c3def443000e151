package pii

import (
	"encoding/json"
	"os"
	"slices"
	"testing"
)

// differences are the cases of Presidio's suite where this detector answers otherwise, on
// purpose. Each says why; a case that no longer differs fails the test, so the list stays true.
var differences = map[string]string{
	// Presidio takes UATP (AirPlus) numbers, 15 digits from 1, for cards. A 15-digit reference
	// or order number from 1 passes Luhn one time in ten: UATP is not a card network a bank's
	// user pays with, and it is not looked for.
	"122000000000003":                 "UATP is not a network looked for",
	"my credit card: 122000000000003": "UATP is not a network looked for",
	// Presidio wants an IBAN's letters in capitals. A transcript or a user typing on a phone
	// writes them in any case: the detector reads any case, and these mixed-case IBANs are
	// valid once in capitals (ISO 13616 reads them case-insensitively).
	"LV80 bANK 0000 4351 9500 1": "any case is read",
	// Presidio reads an IBAN's groups joined by blanks or dashes only. Users paste IBANs from
	// statements and apps with other separators between the groups; the mod-97 check and the
	// country's length keep chance out, and the groups must all be joined the same way.
	"Slash as iban separator: AL47/2121/1009/0000/0002/3569/8741": "groups joined by slashes are read",
}

// TestPresidioCases runs the IBAN and card cases of Microsoft Presidio's recognizer tests (a
// third party's view of what must and must not be found: every registry country, valid with
// and without blanks, a letter where a digit goes, a digit short, a wrong check digit; test
// cards of each network, numbers failing Luhn) and wants the same spans, but for the
// differences above.
func TestPresidioCases(t *testing.T) {
	raw, err := os.ReadFile("testdata/presidio-cases.json")
	if err != nil {
		t.Fatal(err)
	}
	var suite struct {
		Cases []struct {
			Kind  string
			Text  string
			Spans [][2]int
		}
	}
	if err := json.Unmarshal(raw, &suite); err != nil {
		t.Fatal(err)
	}
	if len(suite.Cases) < 300 {
		t.Fatalf("%d cases read", len(suite.Cases))
	}
	d, err := New(&Options{Kinds: []Kind{Card, IBAN}})
	if err != nil {
		t.Fatal(err)
	}
	agree := 0
	for _, c := range suite.Cases {
		var got [][2]int
		for _, m := range d.Find(c.Text) {
			if m.Kind.String() == c.Kind {
				got = append(got, [2]int{m.Start, m.End})
			}
		}
		same := slices.Equal(got, c.Spans) || len(got) == 0 && len(c.Spans) == 0
		why, differs := differences[c.Text]
		switch {
		case same && differs:
			t.Errorf("%s %q: now found as Presidio finds it (%v); remove it from the differences", c.Kind, c.Text, got)
		case !same && !differs:
			t.Errorf("%s %q: found %v, Presidio %v", c.Kind, c.Text, got, c.Spans)
		case same:
			agree++
		default:
			t.Logf("%s %q: found %v, Presidio %v (%s)", c.Kind, c.Text, got, c.Spans, why)
		}
	}
	t.Logf("%d of %d cases as Presidio finds them", agree, len(suite.Cases))
}
