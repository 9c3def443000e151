package pii

import (
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"unicode"

	"github.com/convengine/engine/internal/locale"
)

// found is a match's kind and the text it covers, as a test writes it.
type found struct {
	kind Kind
	text string
}

func findAll(t *testing.T, d *Detector, text string) []found {
	t.Helper()
	var out []found
	for _, m := range d.Find(text) {
		out = append(out, found{m.Kind, text[m.Start:m.End]})
	}
	return out
}

func TestFind(t *testing.T) {
	d, err := New(&Options{Patterns: []Pattern{
		{Kind: Account, Name: "sortcode", Regexp: `\b\d{2}-\d{2}-\d{2} \d{8}\b`},
		{Kind: Custom, Name: "customer", Regexp: `\bCUST-[0-9]{6}\b`},
	}})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, text string
		want       []found
	}{
		{"visa in fours", "my card is 4111 1111 1111 1111, exp 12/25", []found{{Card, "4111 1111 1111 1111"}}},
		{"dashes", "card 5555-5555-5555-4444.", []found{{Card, "5555-5555-5555-4444"}}},
		{"amex 4-6-5", "3782 822463 10005", []found{{Card, "3782 822463 10005"}}},
		{"unbroken", "pay with 4012888888881881 now", []found{{Card, "4012888888881881"}}},
		{"card then cvv", "4111 1111 1111 1111 exp 12/25 cvv 123", []found{{Card, "4111 1111 1111 1111"}}},
		{"cards in a list", "4012888888881881 4012-8888-8888-1881 4012 8888 8888 1881",
			[]found{{Card, "4012888888881881"}, {Card, "4012-8888-8888-1881"}, {Card, "4012 8888 8888 1881"}}},
		{"unbroken card then its code", "card 4111111111111111 123 exp 12/25", []found{{Card, "4111111111111111"}}},
		{"unbroken then more of it", "4111111111111111-1234", nil},
		{"arabic-indic digits", "رقم بطاقتي ٤١١١ ١١١١ ١١١١ ١١١١ من فضلك", []found{{Card, "٤١١١ ١١١١ ١١١١ ١١١١"}}},
		{"eastern arabic-indic digits", "کارت ۴۱۱۱۱۱۱۱۱۱۱۱۱۱۱۱", []found{{Card, "۴۱۱۱۱۱۱۱۱۱۱۱۱۱۱۱"}}},
		{"arabic amount and date", "دفعت ١٬٢٣٤٫٥٦ ريال في ١٢/٠٥/٢٠٢٤", nil},
		{"arabic-indic luhn fails", "بطاقة ٤١١١ ١١١١ ١١١١ ١١١٢", nil},
		{"spoken arabic", "رقم بطاقتي أربعة واحد واحد واحد، واحد واحد واحد واحد، واحد واحد واحد واحد، واحد واحد واحد واحد",
			[]found{{Card, "أربعة واحد واحد واحد، واحد واحد واحد واحد، واحد واحد واحد واحد، واحد واحد واحد واحد"}}},
		{"phone before arabic words", "اتصل بي على +34 612 345 678 من فضلك", []found{{Phone, "+34 612 345 678"}}},
		{"dots", "card 4539.1488.0343.6467.", []found{{Card, "4539.1488.0343.6467"}}},
		{"slashes", "4539/1488/0343/6467", []found{{Card, "4539/1488/0343/6467"}}},
		{"underscores", "4539_1488_0343_6467", []found{{Card, "4539_1488_0343_6467"}}},
		{"en dash", "4539–1488–0343–6467", []found{{Card, "4539–1488–0343–6467"}}},
		{"no-break space", "4539\u00a01488\u00a00343\u00a06467", []found{{Card, "4539\u00a01488\u00a00343\u00a06467"}}},
		{"two spaces, a tab, a newline", "4539  1488\t0343\n6467", []found{{Card, "4539  1488\t0343\n6467"}}},
		{"every digit spaced", "4 5 3 9 1 4 8 8 0 3 4 3 6 4 6 7", []found{{Card, "4 5 3 9 1 4 8 8 0 3 4 3 6 4 6 7"}}},
		{"groups of three", "453 914 880 343 646 7", []found{{Card, "453 914 880 343 646 7"}}},
		{"parentheses", "(4539) (1488) (0343) (6467)", []found{{Card, "4539) (1488) (0343) (6467"}}},
		{"zero-width space and marks", "4539\u200b1488\u200f0343\u00ad6467\u0301 ok", []found{{Card, "4539\u200b1488\u200f0343\u00ad6467\u0301"}}},
		{"circled", "④⑤③⑨ ①④⑧⑧ ⓪③④③ ⑥④⑥⑦", []found{{Card, "④⑤③⑨ ①④⑧⑧ ⓪③④③ ⑥④⑥⑦"}}},
		{"superscript", "⁴⁵³⁹ ¹⁴⁸⁸ ⁰³⁴³ ⁶⁴⁶⁷", []found{{Card, "⁴⁵³⁹ ¹⁴⁸⁸ ⁰³⁴³ ⁶⁴⁶⁷"}}},
		{"full-width iban", "ＧＢ８２　ＷＥＳＴ　１２３４　５６９８　７６５４　３２", []found{{IBAN, "ＧＢ８２　ＷＥＳＴ　１２３４　５６９８　７６５４　３２"}}},
		{"arabic-indic iban", "GB٨٢ WEST ١٢٣٤ ٥٦٩٨ ٧٦٥٤ ٣٢", []found{{IBAN, "GB٨٢ WEST ١٢٣٤ ٥٦٩٨ ٧٦٥٤ ٣٢"}}},
		{"iban with zero-width spaces", "GB82\u200bWEST\u200b1234\u200b5698\u200b7654\u200b32", []found{{IBAN, "GB82\u200bWEST\u200b1234\u200b5698\u200b7654\u200b32"}}},
		{"dotted iban", "GB82.WEST.1234.5698.7654.32", []found{{IBAN, "GB82.WEST.1234.5698.7654.32"}}},
		{"dotted luhn fails", "4539.1488.0343.6468", nil},
		{"dotted date and amount", "on 12.05.2024 I paid 1.234.567,89 EUR", nil},
		{"amount in thousands", "$411,111,111,111,111", nil},
		{"address in dots", "192.168.100.101", nil},
		{"mixed separators", "4539 1488/0343.6467", nil},
		{"iban mixed separators", "IS 3003-1377-6887-90 exp 02/26 cvv 908", nil},
		{"luhn fails", "4111 1111 1111 1112", nil},
		{"unknown prefix", "7111 1111 1111 1114", nil},
		{"inside a longer run", "4111111111111111123", nil},
		{"glued to letters", "ref X4111111111111111", nil},
		{"part of a longer grouping", "5049 2643 9481 9309 1111", nil},
		{"amounts", "I paid $1,234.56 and 1 234,56 € and 1.234.567,89 EUR", nil},
		{"dates and times", "on 12/05/2024, 2024-05-12 at 10:30 or 12.05.2024", nil},
		{"references", "ref REF-8842-1193, order ORD-20240512-0042, ticket #123456 654321", nil},
		{"iban", "IBAN GB82 WEST 1234 5698 7654 32 please", []found{{IBAN, "GB82 WEST 1234 5698 7654 32"}}},
		{"iban lower case unbroken", "iban de89370400440532013000.", []found{{IBAN, "de89370400440532013000"}}},
		{"iban wrong check", "GB83 WEST 1234 5698 7654 32", nil},
		{"iban wrong length", "DE89 3704 0044 0532 0130 001", nil},
		{"iban unknown country", "ZZ89 3704 0044 0532 0130 00", nil},
		{"phone e164", "call +34 612 345 678 now", []found{{Phone, "+34 612 345 678"}}},
		{"phone us", "or (415) 555-0123.", []found{{Phone, "(415) 555-0123"}}},
		{"phone us dashes", "415-555-0123", []found{{Phone, "415-555-0123"}}},
		{"phone fr", "06 12 34 56 78", []found{{Phone, "06 12 34 56 78"}}},
		{"phone es", "612 34 56 78", []found{{Phone, "612 34 56 78"}}},
		{"phone de", "030 1234567", []found{{Phone, "030 1234567"}}},
		{"phone mx", "55 1234 5678", []found{{Phone, "55 1234 5678"}}},
		{"phone uk e164", "+44 20 7946 0958", []found{{Phone, "+44 20 7946 0958"}}},
		{"bare digits are no phone", "call 612345678", nil},
		{"amount is no phone", "$612 345 678", nil},
		{"email", "write to john.doe+bank@mail.example.com.", []found{{Email, "john.doe+bank@mail.example.com"}}},
		{"email without tld", "user@localhost", nil},
		{"account pattern", "sort code 20-00-00 55779911", []found{{Account, "20-00-00 55779911"}}},
		{"custom pattern", "I am CUST-123456", []found{{Custom, "CUST-123456"}}},
		{"several in order", "card 4111111111111111 and IBAN ES9121000418450200051332, mail a@b.co",
			[]found{{Card, "4111111111111111"}, {IBAN, "ES9121000418450200051332"}, {Email, "a@b.co"}}},
		// Numbers from 10 to 99 said as words, in pairs.
		{"en pairs", "my card is forty-one eleven, eleven eleven, eleven eleven, eleven eleven thanks",
			[]found{{Card, "forty-one eleven, eleven eleven, eleven eleven, eleven eleven"}}},
		{"en pairs and digits", "it's forty one eleven one one eleven, eleven eleven, eleven one one",
			[]found{{Card, "forty one eleven one one eleven, eleven eleven, eleven one one"}}},
		{"es pairs", "mi tarjeta es cincuenta y cinco cincuenta y cinco, cincuenta y cinco cincuenta y cinco, cincuenta y cinco cincuenta y cinco, cuarenta y cuatro cuarenta y cuatro",
			[]found{{Card, "cincuenta y cinco cincuenta y cinco, cincuenta y cinco cincuenta y cinco, cincuenta y cinco cincuenta y cinco, cuarenta y cuatro cuarenta y cuatro"}}},
		{"es veinti", "veintidós veintitrés cero cero treinta y uno veintidós cero cero treinta y dos veintidós",
			[]found{{Card, "veintidós veintitrés cero cero treinta y uno veintidós cero cero treinta y dos veintidós"}}},
		{"fr pairs", "ma carte quarante douze quatre-vingt-huit quatre-vingt-huit, quatre-vingt-huit quatre-vingt-huit, dix-huit quatre-vingt-un merci",
			[]found{{Card, "quarante douze quatre-vingt-huit quatre-vingt-huit, quatre-vingt-huit quatre-vingt-huit, dix-huit quatre-vingt-un"}}},
		{"fr phone in pairs", "appelez-moi au zéro six, douze, trente-quatre, cinquante-six, soixante-dix-huit",
			[]found{{Phone, "zéro six, douze, trente-quatre, cinquante-six, soixante-dix-huit"}}},
		{"fr phone et onze", "c'est le zéro six douze trente-quatre cinquante-six soixante et onze",
			[]found{{Phone, "zéro six douze trente-quatre cinquante-six soixante et onze"}}},
		{"fr phone quatre-vingt-dix-sept", "zéro un quatre-vingt-dix-sept vingt et un quatre-vingts zéro neuf",
			[]found{{Phone, "zéro un quatre-vingt-dix-sept vingt et un quatre-vingts zéro neuf"}}},
		{"de pairs", "meine Karte einundvierzig elf elf elf elf elf elf elf",
			[]found{{Card, "einundvierzig elf elf elf elf elf elf elf"}}},
		{"de iban pairs", "IBAN D E neunundachtzig siebenunddreißig null vier null null vierundvierzig null fünf zweiunddreißig null eins dreißig null null",
			[]found{{IBAN, "D E neunundachtzig siebenunddreißig null vier null null vierundvierzig null fünf zweiunddreißig null eins dreißig null null"}}},
		{"it pairs", "la carta quarantuno undici undici undici undici undici undici undici",
			[]found{{Card, "quarantuno undici undici undici undici undici undici undici"}}},
		{"pt pairs", "o cartão quarenta e um onze onze onze onze onze onze onze",
			[]found{{Card, "quarenta e um onze onze onze onze onze onze onze"}}},
		{"ar pairs", "رقم بطاقتي واحد وأربعون أحد عشر أحد عشر أحد عشر أحد عشر أحد عشر أحد عشر أحد عشر",
			[]found{{Card, "واحد وأربعون أحد عشر أحد عشر أحد عشر أحد عشر أحد عشر أحد عشر أحد عشر"}}},
		{"en iban pairs", "E S ninety-one twenty-one zero zero zero four eighteen forty-five zero two zero zero zero five thirteen thirty-two",
			[]found{{IBAN, "E S ninety-one twenty-one zero zero zero four eighteen forty-five zero two zero zero zero five thirteen thirty-two"}}},
		{"amount in tens", "I paid forty-one euros and eleven cents", nil},
		{"amount in hundreds", "two hundred fifty euros, four thousand one hundred eleven", nil},
		{"es amount", "veinte euros", nil},
		{"date said as words", "the twelfth of May nineteen ninety-nine", nil},
		{"pairs luhn fails", "forty-one eleven eleven eleven eleven eleven eleven twelve", nil},
		{"pairs inside a longer run", "twelve forty-one eleven eleven eleven eleven eleven eleven eleven", nil},
		{"numbers in a list are no phone", "twenty, thirty, forty, fifty, sixty", nil},
		{"iban with a wrong check said in pairs is no card", "my IBAN is BE fifty-eight fifty-three fifteen forty-five sixteen thirty-five sixty-five", nil},
		{"card in a transfer request", "transfer 200 euros to ES91 2100 0418 4502 0005 1332 from card 4111 1111 1111 1111 on 12/05",
			[]found{{IBAN, "ES91 2100 0418 4502 0005 1332"}, {Card, "4111 1111 1111 1111"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := findAll(t, d, tt.text)
			if !slices.Equal(got, tt.want) {
				t.Errorf("Find(%q) = %v, want %v", tt.text, got, tt.want)
			}
		})
	}
}

func TestFindSpoken(t *testing.T) {
	d, err := New(&Options{Patterns: []Pattern{{Kind: Account, Name: "routing", Regexp: `^\d{9}$`}}})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, text string
		kind       Kind
		value      string
		said       string // the words the match covers
	}{
		{"en", "my card is four one one one one one one one one one one one one one one one thanks",
			Card, "4111111111111111", "four one one one one one one one one one one one one one one one"},
		{"en double and oh", "five five five five, five five five five, five five five five, double four double four",
			Card, "5555555555554444", "five five five five, five five five five, five five five five, double four double four"},
		{"en oh", "four oh one two eight eight eight eight eight eight eight eight one eight eight one",
			Card, "4012888888881881", "four oh one two eight eight eight eight eight eight eight eight one eight eight one"},
		{"mixed", "it's 4111 one one one one, one one one one, one one one one.",
			Card, "4111111111111111", "4111 one one one one, one one one one, one one one one"},
		{"hyphens", "four-one-one-one-one-one-one-one-one-one-one-one-one-one-one-one",
			Card, "4111111111111111", "four-one-one-one-one-one-one-one-one-one-one-one-one-one-one-one"},
		{"fr", "ma carte quatre un un un un un un un un un un un un un un un merci",
			Card, "4111111111111111", "quatre un un un un un un un un un un un un un un un"},
		{"fr article", "c'est un quatre un un un un un un un un un un un un un un un",
			Card, "4111111111111111", "quatre un un un un un un un un un un un un un un un"},
		{"es", "cuatro uno uno uno uno uno uno uno uno uno uno uno uno uno uno uno",
			Card, "4111111111111111", "cuatro uno uno uno uno uno uno uno uno uno uno uno uno uno uno uno"},
		{"de", "vier eins eins eins eins eins eins eins eins eins eins eins eins eins eins eins",
			Card, "4111111111111111", "vier eins eins eins eins eins eins eins eins eins eins eins eins eins eins eins"},
		{"it", "quattro uno uno uno uno uno uno uno uno uno uno uno uno uno uno uno",
			Card, "4111111111111111", "quattro uno uno uno uno uno uno uno uno uno uno uno uno uno uno uno"},
		{"pt", "quatro um um um um um um um um um um um um um um um",
			Card, "4111111111111111", "quatro um um um um um um um um um um um um um um um"},
		{"hesitation", "four one one one, uh, one one one one one one one one one one one one",
			Card, "4111111111111111", "four one one one, uh, one one one one one one one one one one one one"},
		{"security code after a pause", "four one one one one one one one one one one one one one one one, one two three",
			Card, "4111111111111111", "four one one one one one one one one one one one one one one one"},
		{"iban spelled", "E S nine one two one zero zero zero four one eight four five zero two zero zero zero five one three three two",
			IBAN, "ES9121000418450200051332", "E S nine one two one zero zero zero four one eight four five zero two zero zero zero five one three three two"},
		{"iban with letters", "G B eight two W E S T one two three four five six nine eight seven six five four three two",
			IBAN, "GB82WEST12345698765432", "G B eight two W E S T one two three four five six nine eight seven six five four three two"},
		{"phone plus", "plus three four six one two three four five six seven eight",
			Phone, "+34612345678", "three four six one two three four five six seven eight"},
		{"phone national fr", "zéro six un deux trois quatre cinq six sept huit",
			Phone, "0612345678", "zéro six un deux trois quatre cinq six sept huit"},
		{"tenant pattern", "routing one two three four five six seven eight nine",
			Account, "123456789", "one two three four five six seven eight nine"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ms := d.Find(tt.text)
			if len(ms) != 1 {
				t.Fatalf("Find(%q) = %+v, want one %v", tt.text, ms, tt.kind)
			}
			m := ms[0]
			if m.Kind != tt.kind || m.Value != tt.value || tt.text[m.Start:m.End] != tt.said {
				t.Errorf("Find(%q) = %v %q covering %q, want %v %q covering %q", tt.text, m.Kind, m.Value, tt.text[m.Start:m.End], tt.kind, tt.value, tt.said)
			}
		})
	}
	for _, text := range []string{
		"four one one one one one one one one one one one one one one two",   // Luhn fails
		"seven one one one one one one one one one one one one one one four", // no network
		"I want two hundred and fifty euros on the fifth of May",
		"one two three four five six",
	} {
		if ms := d.Find(text); len(ms) != 0 {
			t.Errorf("Find(%q) = %+v, want nothing", text, ms)
		}
	}
}

func TestLocales(t *testing.T) {
	fr := "quatre un un un un un un un un un un un un un un un"
	en, err := New(&Options{Locales: []string{"en"}})
	if err != nil {
		t.Fatal(err)
	}
	if ms := en.Find(fr); len(ms) != 0 {
		t.Errorf("English only: Find(%q) = %+v, want nothing", fr, ms)
	}
	none, err := New(&Options{Locales: []string{}})
	if err != nil {
		t.Fatal(err)
	}
	if ms := none.Find("four one one one one one one one one one one one one one one one"); len(ms) != 0 {
		t.Errorf("no locales: spoken digits found: %+v", ms)
	}
	if ms := none.Find("4111 1111 1111 1111"); len(ms) != 1 {
		t.Errorf("no locales: typed card not found: %+v", ms)
	}
}

func TestKinds(t *testing.T) {
	d, err := New(&Options{Kinds: []Kind{IBAN}})
	if err != nil {
		t.Fatal(err)
	}
	text := "4111 1111 1111 1111, GB82 WEST 1234 5698 7654 32, +34 612 345 678, a@example.com"
	got := findAll(t, d, text)
	if want := []found{{IBAN, "GB82 WEST 1234 5698 7654 32"}}; !slices.Equal(got, want) {
		t.Errorf("IBAN only: %v, want %v", got, want)
	}
}

func TestNewErrors(t *testing.T) {
	for name, o := range map[string]*Options{
		"bad regexp":    {Patterns: []Pattern{{Kind: Account, Name: "x", Regexp: `(`}}},
		"perl regexp":   {Patterns: []Pattern{{Kind: Account, Name: "x", Regexp: `(?=\d)`}}},
		"pattern kind":  {Patterns: []Pattern{{Kind: Card, Name: "x", Regexp: `\d`}}},
		"no name":       {Patterns: []Pattern{{Kind: Custom, Regexp: `\d`}}},
		"unknown kind":  {Kinds: []Kind{Kind(42)}},
		"locale":        {Locales: []string{"xx"}},
		"negative max":  {MaxInput: -1},
		"many patterns": {Patterns: make([]Pattern, maxPatterns+1)},
	} {
		if _, err := New(o); !errors.Is(err, ErrOptions) {
			t.Errorf("%s: New = %v, want ErrOptions", name, err)
		}
	}
}

func TestMaxInput(t *testing.T) {
	d, err := New(&Options{MaxInput: 64})
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Repeat("é", 20) + " 4111 1111 1111 1111 " + strings.Repeat("x", 40) + " 5555 5555 5555 4444"
	ms := d.Find(text)
	if len(ms) != 1 || ms[0].Value != "4111111111111111" {
		t.Errorf("Find = %+v, want only the card in the first 64 bytes", ms)
	}
	if !d.Truncated(text) || d.Truncated(text[:64]) {
		t.Error("Truncated is wrong")
	}
	if def, _ := New(nil); def.MaxInput() != DefaultMaxInput {
		t.Errorf("default MaxInput = %d", def.MaxInput())
	}
}

func TestMask(t *testing.T) {
	d, _ := New(nil)
	tests := []struct {
		text string
		keep int
		want string
	}{
		{"4111 1111 1111 1111", 4, "•••• 1111"},
		{"4111 1111 1111 1111", 0, "••••"},
		{"4111 1111 1111 1111", 100, "•••• 11111111"}, // at most half
		{"ES91 2100 0418 4502 0005 1332", 4, "ES•• •••• … 1332"},
		{"+34 612 345 678", 3, "•••• 678"},
		{"john.doe@example.com", 4, "j•••@e•••.com"},
	}
	for _, tt := range tests {
		ms := d.Find(tt.text)
		if len(ms) != 1 {
			t.Fatalf("Find(%q) = %+v", tt.text, ms)
		}
		if got := d.Mask(ms[0], tt.keep); got != tt.want {
			t.Errorf("Mask(%q, %d) = %q, want %q", tt.text, tt.keep, got, tt.want)
		}
	}
}

func TestChecksums(t *testing.T) {
	for _, c := range publishedCards {
		v := strings.ReplaceAll(c, " ", "")
		if !luhn(v) {
			t.Errorf("luhn(%s) = false", v)
		}
		if luhn(v[:len(v)-1] + string('0'+(v[len(v)-1]-'0'+1)%10)) {
			t.Errorf("luhn of %s with another check digit = true", v)
		}
	}
	for _, i := range registryIBANs {
		v := strings.ReplaceAll(i, " ", "")
		if !mod97(v) {
			t.Errorf("mod97(%s) = false", v)
		}
		if mod97(v[:2] + string('0'+(v[2]-'0'+1)%10) + v[3:]) {
			t.Errorf("mod97 of %s with another check = true", v)
		}
	}
	if len(ibanLengths) < 89 {
		t.Errorf("the registry has %d countries here, want every one (89 or more)", len(ibanLengths))
	}
	for cc, n := range ibanLengths {
		if n < 15 || n > maxIBAN {
			t.Errorf("%s: length %d out of range", cc, n)
		}
	}
}

// TestConcurrent uses one detector from many goroutines, for the race detector.
func TestConcurrent(t *testing.T) {
	d, _ := New(&Options{Patterns: []Pattern{{Kind: Custom, Name: "c", Regexp: `CUST-\d+`}}})
	texts := []string{"4111 1111 1111 1111", "GB82 WEST 1234 5698 7654 32", "four one one one one one one one one one one one one one one one", "CUST-1234"}
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			for range 200 {
				if ms := d.Find(texts[i%len(texts)]); len(ms) != 1 {
					t.Errorf("Find = %+v", ms)
					return
				}
			}
		})
	}
	wg.Wait()
}

// TestArabicDigitsValue: a card typed in Arabic-Indic digits has its value in ASCII digits,
// and is masked as any other.
func TestArabicDigitsValue(t *testing.T) {
	d, err := New(nil)
	if err != nil {
		t.Fatal(err)
	}
	ms := d.Find("بطاقتي ٤١١١ ١١١١ ١١١١ ١١١١")
	if len(ms) != 1 || ms[0].Value != "4111111111111111" || d.Mask(ms[0], 4) != "•••• 1111" {
		t.Fatalf("found %+v", ms)
	}
}

// TestDigitsOfEveryScript: a card typed in the decimal digits of any script is found, valued in
// ASCII digits; the digits of each script run from zero to nine, which digitValue relies on.
func TestDigitsOfEveryScript(t *testing.T) {
	d, err := New(nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, zero := range []rune{'٠', '۰', '०', '০', '๐', '０', '𝟎'} {
		card := []rune("4111 1111 1111 1111")
		for i, r := range card {
			if r != ' ' {
				card[i] = zero + r - '0'
			}
		}
		ms := d.Find("card " + string(card) + ".")
		if len(ms) != 1 || ms[0].Value != "4111111111111111" {
			t.Errorf("%q: found %+v", string(card), ms)
		}
	}
	for _, rg := range unicode.Nd.R16 {
		if locale.DigitValue(rune(rg.Lo)) != 0 || locale.DigitValue(rune(rg.Lo)+9) != 9 || rg.Stride != 1 || (rg.Hi-rg.Lo+1)%10 != 0 {
			t.Errorf("Nd range %+v is not runs of ten from zero", rg)
		}
	}
	for _, rg := range unicode.Nd.R32 {
		if locale.DigitValue(rune(rg.Lo)) != 0 || locale.DigitValue(rune(rg.Lo)+9) != 9 || rg.Stride != 1 || (rg.Hi-rg.Lo+1)%10 != 0 {
			t.Errorf("Nd range %+v is not runs of ten from zero", rg)
		}
	}
}

// TestMaskCoversWhatWasWritten: a number written with invisible characters, combining marks or
// compatibility forms is masked whole, so that no digit of it is left around the mask.
func TestMaskCoversWhatWasWritten(t *testing.T) {
	for _, text := range []string{
		"card 4\u200b5\u200b3\u200b9 1488 0343 646\u200b7\u200b, thanks",
		"card 4539 1488 0343 6467\u20e3 thanks",
		"card \u200f4539\u200f.1488.0343.6467\u200f thanks",
		"card ４５３９ ①④⑧⑧ ⁰³⁴³ 6467 thanks",
	} {
		out := RedactingHandler(nil, nil).(*redacting).redact(text)
		if digits := digitsOf(strings.TrimSuffix(out, " thanks")); digits != "6467" || !strings.Contains(out, "••••") {
			t.Errorf("%q masked as %q", text, out)
		}
	}
}
