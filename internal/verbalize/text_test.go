package verbalize

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestTextNumbers(t *testing.T) {
	for locale, cases := range map[string][]struct{ in, want string }{
		"en": {
			{"1,234", "one thousand two hundred thirty-four"},
			{"3.5", "three point five"},
			{"3.14", "three point one four"},
			{"-7 degrees", "minus seven degrees"},
			{"(-7)", "(minus seven)"},
			{"1.234,56", "one thousand two hundred thirty-four point five six"},
			{"1,5", "one,five"},
			{"65%", "sixty-five percent"},
			{"4.5%", "four point five percent"},
			{"1 %", "one percent"},
			{"007", "zero zero seven"},
			{"12345678901234567", "one two three four five six seven eight nine zero one two three four five six seven"},
			{"the 1st and 22nd", "the first and twenty-second"},
			{"3x faster", "three times faster"},
			{"10km", "ten kilometers"},
			{"1 km", "one kilometer"},
			{"1.5 kg", "one point five kilograms"},
			{"20°C", "twenty degrees Celsius"},
			{"90°", "ninety degrees"},
			{"version 2.10.3", "version two point ten point three"},
			{"Call 555-1234.", "Call five five five, one two three four."},
			{"(555) 123-4567", "five five five, one two three, four five six seven"},
			{"+1-800-555-0100", "plus one, eight zero zero, five five five, zero one zero zero"},
			{"pages 10-20", "pages ten-twenty"},
			{"mp3 A4 5G 1990s", "mp3 A4 5G 1990s"},
			{"COVID-19", "COVID-nineteen"},
			{"1,2,3", "one,two,three"},
			{"1/2 price", "one half price"},
			{"3/4", "three quarters"},
			{"24/7", "twenty-four/seven"},
		},
		"es": {
			{"1.234", "mil doscientos treinta y cuatro"},
			{"1 234 567", "un millón doscientos treinta y cuatro mil quinientos sesenta y siete"},
			{"3,5", "tres coma cinco"},
			{"3.5", "tres coma cinco"},
			{"3,14", "tres coma catorce"},
			{"3,05", "tres coma cero cinco"},
			{"65%", "sesenta y cinco por ciento"},
			{"4,5 %", "cuatro coma cinco por ciento"},
			{"1 hora y 21 personas", "una hora y veintiuna personas"},
			{"21 días", "veintiún días"},
			{"el 1 es", "el uno es"},
			{"el 1º y la 2ª", "el primero y la segunda"},
			{"el 1.er piso", "el primer piso"},
			{"-7", "menos siete"},
			{"10 km", "diez kilómetros"},
		},
		"es-MX": {{"1,234.5", "mil doscientos treinta y cuatro punto cinco"}},
		"fr": {
			{"1 234", "mille deux cent trente-quatre"},
			{"1\u202f234,5", "mille deux cent trente-quatre virgule cinq"},
			{"3,5", "trois virgule cinq"},
			{"65 %", "soixante-cinq pour cent"},
			{"65\u00a0%", "soixante-cinq pour cent"},
			{"1 heure", "une heure"},
			{"21 personnes", "vingt et une personnes"},
			{"le 2e étage", "le deuxième étage"},
			{"la 1re fois", "la première fois"},
			{"1,5 km", "un virgule cinq kilomètre"},
		},
		"de": {
			{"1.234", "eintausendzweihundertvierunddreißig"},
			{"3,5", "drei Komma fünf"},
			{"65 %", "fünfundsechzig Prozent"},
			{"65%", "fünfundsechzig Prozent"},
			{"1 %", "ein Prozent"},
			{"1 Stunde", "eine Stunde"},
			{"1 Tag", "ein Tag"},
			{"1 Bier", "eins Bier"},
			{"3x", "dreimal"},
		},
		"de-CH": {{"1'234.5", "eintausendzweihundertvierunddreissig Komma fünf"}},
		"pt": {
			{"1.234", "mil duzentos e trinta e quatro"},
			{"3,5", "três vírgula cinco"},
			{"65%", "sessenta e cinco por cento"},
			{"2 horas", "duas horas"},
			{"2 dias", "dois dias"},
			{"o 1º lugar", "o primeiro lugar"},
			{"10 km", "dez quilômetros"},
		},
		"pt-PT": {{"10 km", "dez quilómetros"}},
		"ar": {
			{"٢٠", "عشرون"},
			{"20", "عشرون"},
			{"3.5", "ثلاثة فاصلة خمسة"},
			{"٣٫٥", "ثلاثة فاصلة خمسة"},
			{"65%", "خمسة وستون بالمائة"},
			{"٦٥٪", "خمسة وستون بالمائة"},
			{"١٬٠٠٠", "ألف"},
		},
		"he": {
			{"3.5", "שלוש נקודה חמש"},
			{"65%", "שישים וחמישה אחוז"},
			{"5 ילדים", "חמישה ילדים"},
			{"2 שעות", "שתי שעות"},
			{"1,234", "אלף מאתיים שלושים וארבע"},
		},
	} {
		for _, tc := range cases {
			if got := Text(tc.in, locale); got != tc.want {
				t.Errorf("Text(%q, %q) = %q, want %q", tc.in, locale, got, tc.want)
			}
		}
	}
}

func TestTextAbbreviationsAndSymbols(t *testing.T) {
	for locale, cases := range map[string][]struct{ in, want string }{
		"en": {
			{"Mr. Smith and Mrs. Jones", "Mister Smith and Missus Jones"},
			{"Dr. Who", "Doctor Who"},
			{"Elm Dr. is closed", "Elm Dr. is closed"},
			{"St. Louis", "Saint Louis"},
			{"on Main St. today", "on Main Street today"},
			{"Main St. Then", "Main St. Then"},
			{"fruit, e.g. apples", "fruit, for example apples"},
			{"apples, pears, etc. Then we go", "apples, pears, et cetera. Then we go"},
			{"apples, etc. and more", "apples, et cetera and more"},
			{"No. 5", "number five"},
			{"The answer is No.", "The answer is No."},
			{"#3", "number three"},
			{"#hashtag", "#hashtag"},
			{"Tom & Jerry", "Tom and Jerry"},
			{"AT&T", "AT and T"},
			{"me@example.com", "me at example.com"},
			{"Great 👍 thanks!", "Great thanks!"},
			{"🎉 Done", "Done"},
			{"👨‍👩‍👧 family", "family"},
			{"Mrs.Smith", "Mrs.Smith"},
		},
		"es": {
			{"Sr. García", "señor García"},
			{"la Dra. López", "la doctora López"},
			{"p. ej. esto", "por ejemplo esto"},
			{"EE. UU.", "Estados Unidos"},
			{"n.º 5", "número cinco"},
			{"Juan & María", "Juan y María"},
			{"#3", "número tres"},
			{"yo@correo.es", "yo arroba correo.es"},
		},
		"fr": {
			{"M. Dupont", "Monsieur Dupont"},
			{"Mme Curie", "Madame Curie"},
			{"n° 5", "numéro cinq"},
			{"#3", "numéro trois"},
			{"3x", "trois fois"},
		},
		"de": {
			{"z. B. Hr. Müller", "zum Beispiel Herr Müller"},
			{"Nr. 5", "Nummer fünf"},
			{"usw. Dann", "und so weiter. Dann"},
			{"#3", "Nummer drei"},
		},
		"pt": {
			{"Sr. Silva", "senhor Silva"},
			{"nº 5", "número cinco"},
			{"#3", "número três"},
			{"3x", "três vezes"},
		},
		"ar": {
			{"أحمد & علي", "أحمد و علي"},
			{"#3", "رقم ثلاثة"},
		},
	} {
		for _, tc := range cases {
			if got := Text(tc.in, locale); got != tc.want {
				t.Errorf("Text(%q, %q) = %q, want %q", tc.in, locale, got, tc.want)
			}
		}
	}
}

func TestTextLeavesTheRest(t *testing.T) {
	for _, tc := range []struct{ in, locale, want string }{
		{"Hello, world! How are you? Fine.", "en", "Hello, world! How are you? Fine."},
		{"¿Cuánto dinero tengo? ¡Mucho!", "es", "¿Cuánto dinero tengo? ¡Mucho!"},
		{"ما هو رصيدي؟", "ar", "ما هو رصيدي؟"},
		{"line one\nline two", "en", "line one\nline two"},
		{"", "en", ""},
		// A language it does not know: only emoji are dropped.
		{"Costa $20.00 e 3,5 km 😀", "it", "Costa $20.00 e 3,5 km "},
		{"Det kostar 20 kr 🙂", "sv", "Det kostar 20 kr "},
		{"bad \xff byte 5", "en", "bad \uFFFD byte five"},
	} {
		if got := Text(tc.in, tc.locale); got != tc.want {
			t.Errorf("Text(%q, %q) = %q, want %q", tc.in, tc.locale, got, tc.want)
		}
	}
}

func FuzzText(f *testing.F) {
	for _, s := range []string{
		"It costs $1,234.56 on 2026-11-23 at 14:05.", "-$20.00 +$60.00 US$5 5 € 1.234,56 €",
		"65% 4.5% 3x 10km 20°C #3 No. 5 Dr. Smith & co @home", "1,2,3,4,5,6,7,8,9,0,1,2",
		"555-1234 (555) 123-4567 +1-800-555-0100 2.10.3.4", "November 23, 2026 23 Nov. 1st 9 a.m.",
		"١٬٢٣٤٫٥٦ $ ٦٥٪", "14h05 1er mai 23.11.2026 z. B.", "👨‍👩‍👧 🎉", "$", "-", "1.", "9:",
		strings.Repeat("9", 40), strings.Repeat("1 ", 30),
	} {
		f.Add(s)
	}
	locales := []string{"en", "en-GB", "es", "es-MX", "fr", "fr-CH", "de", "de-CH", "pt", "pt-PT", "ar", "he", "it"}
	f.Fuzz(func(t *testing.T, s string) {
		for _, locale := range locales {
			out := Text(s, locale)
			if !utf8.ValidString(out) {
				t.Fatalf("Text(%q, %q) = %q: not UTF-8", s, locale, out)
			}
			if len(out) > 40*len(s)+64 {
				t.Fatalf("Text(%q, %q) is %d bytes long", s, locale, len(out))
			}
		}
	})
}

func BenchmarkText(b *testing.B) {
	s := "Your balance is $1,234.56. I sent $20 to Alex on Nov. 3 at 3:15 PM, 2.5% more than in 2024."
	b.SetBytes(int64(len(s)))
	for b.Loop() {
		Text(s, "en")
	}
}

// TestTextMaskedValues: a value shown masked (package pii's "•••• 1111") is said by the digits
// it leaves, one by one, and its mask is not said.
func TestTextMaskedValues(t *testing.T) {
	for _, tc := range []struct{ in, locale, want string }{
		{"Card •••• 1111 is valid.", "en", "Card one one one one is valid."},
		{"IBAN GB•• •••• … 5432, please.", "en", "IBAN GB five four three two, please."},
		{"La tarjeta •••• 4242 está activa.", "es", "La tarjeta cuatro dos cuatro dos está activa."},
		{"البطاقة •••• 1111 صالحة", "ar", "البطاقة واحد واحد واحد واحد صالحة"},
		{"Card ••••, hidden.", "en", "Card , hidden."},
		{"call •••• 78 now", "en", "call seven eight now"},
	} {
		if got := Text(tc.in, tc.locale); got != tc.want {
			t.Errorf("Text(%q, %s) = %q, want %q", tc.in, tc.locale, got, tc.want)
		}
	}
}
