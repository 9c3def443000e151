package pii

import (
	"strings"
	"testing"
)

// FuzzFind checks what every caller relies on, whatever the text: no panic, matches within
// the text and the bytes read, in order, without overlaps, each card Luhn-valid and each IBAN
// mod-97-valid.
func FuzzFind(f *testing.F) {
	for _, s := range []string{
		"my card is 4111 1111 1111 1111", "GB82 WEST 1234 5698 7654 32", "+34 612 345 678",
		"(415) 555-0123", "a.b@example.com", "four one one one one one one one one one one one one one one one",
		"E S nine one two one zero zero zero four one eight four five zero two zero zero zero five one three three two",
		"quatre un un un, euh, un un un un", "double double four", "plus plus 3", "$1,234.56", "12/05/2024",
		"4111 one one one one, one one one one, one one one one", "CUST-123456", "É@é.é", "\xff\xfe4111",
		"zéro six, douze, trente-quatre, soixante et onze, quatre-vingt-dix-sept", "forty-one eleven eleven",
		"واحد وأربعون أحد عشر", "einundvierzig elf", "cuarenta y", "quatre-vingts vingt et",
		"4539.1488.0343.6467", "(4539) (1488) (0343) (6467)", "4 5 3 9 1 4 8 8 0 3 4 3 6 4 6 7",
		"4539\u200b1488\u200f0343\u00ad6467\u0301", "④⑤③⑨ ¹⁴⁸⁸ ０３４３ ٦٤٦٧", "GB82_WEST_1234_5698_7654_32",
		"ＧＢ８２　ＷＥＳＴ　１２３４", "IE71_OZWY_6708_2036_7459_23", "⑷⑸ ﬁ … 4\u0301\u0301\u200b", "453 914 880 343 646 7",
	} {
		f.Add(s)
	}
	d, err := New(&Options{MaxInput: 4096, Patterns: []Pattern{
		{Kind: Account, Name: "acct", Regexp: `\d{6,9}`},
		{Kind: Custom, Name: "cust", Regexp: `CUST-\d+|\b`},
	}})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, text string) {
		ms := d.Find(text)
		end := 0
		for _, m := range ms {
			if m.Start < end || m.End <= m.Start || m.End > len(text) || m.End > d.MaxInput() {
				t.Fatalf("match %+v out of order or bounds (previous end %d, text %d bytes)", m, end, len(text))
			}
			end = m.End
			switch m.Kind {
			case Card:
				if !luhn(m.Value) || !knownIssuer(m.Value) {
					t.Fatalf("card %q is not valid", m.Value)
				}
			case IBAN:
				if !isIBAN(m.Value) {
					t.Fatalf("IBAN %q is not valid", m.Value)
				}
			case Phone:
				if strings.Trim(m.Value, "+0123456789") != "" {
					t.Fatalf("phone %q is not digits", m.Value)
				}
			}
			_ = d.Mask(m, 4)
		}
	})
}
