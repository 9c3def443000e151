package verbalize

import "testing"

func TestMoney(t *testing.T) {
	for _, tc := range []struct{ decimal, currency, locale, want string }{
		{"1234.56", "USD", "en", "one thousand two hundred thirty-four dollars and fifty-six cents"},
		{"20", "USD", "en", "twenty dollars"},
		{"20.00", "usd", "en-US", "twenty dollars"},
		{"1", "USD", "en", "one dollar"},
		{"0.01", "USD", "en", "one cent"},
		{"-3.5", "GBP", "en", "minus three pounds and fifty pence"},
		{"1000000", "EUR", "en", "one million euros"},
		{"500", "JPY", "en", "five hundred yen"},
		{"1.005", "USD", "en", "one point zero zero five dollars"},
		{"1.50", "INR", "en", "one rupee and fifty paise"},
		{"1234.56", "EUR", "es", "mil doscientos treinta y cuatro euros con cincuenta y seis céntimos"},
		{"1", "USD", "es", "un dólar"},
		{"21", "USD", "es", "veintiún dólares"},
		{"21", "GBP", "es", "veintiuna libras"},
		{"200", "GBP", "es", "doscientas libras"},
		{"100", "USD", "es", "cien dólares"},
		{"1000000", "USD", "es", "un millón de dólares"},
		{"2000000.50", "USD", "es", "dos millones de dólares con cincuenta centavos"},
		{"1234.56", "EUR", "fr", "mille deux cent trente-quatre euros et cinquante-six centimes"},
		{"1", "USD", "fr", "un dollar"},
		{"21", "USD", "fr", "vingt et un dollars"},
		{"21", "GBP", "fr", "vingt et une livres"},
		{"0", "EUR", "fr", "zéro euro"},
		{"2000000", "EUR", "fr", "deux millions d'euros"},
		{"1000000", "USD", "fr", "un million de dollars"},
		{"1234.56", "EUR", "de", "eintausendzweihundertvierunddreißig Euro und sechsundfünfzig Cent"},
		{"1", "USD", "de", "ein Dollar"},
		{"20", "USD", "de", "zwanzig Dollar"},
		{"1", "INR", "de", "eine Rupie"},
		{"5.20", "CHF", "de-CH", "fünf Franken und zwanzig Rappen"},
		{"1", "USD", "pt", "um dólar"},
		{"2", "USD", "pt", "dois dólares"},
		{"2", "GBP", "pt", "duas libras"},
		{"1234.56", "BRL", "pt-BR", "mil duzentos e trinta e quatro reais e cinquenta e seis centavos"},
		{"0.50", "EUR", "pt-PT", "cinquenta cêntimos"},
		{"1000000", "BRL", "pt", "um milhão de reais"},
		{"1", "USD", "ar", "دولار واحد"},
		{"2", "USD", "ar", "دولاران"},
		{"3", "USD", "ar", "ثلاثة دولارات"},
		{"10", "USD", "ar", "عشرة دولارات"},
		{"11", "USD", "ar", "أحد عشر دولارًا"},
		{"20", "USD", "ar", "عشرون دولارًا"},
		{"100", "USD", "ar", "مائة دولار"},
		{"200", "USD", "ar", "مائتا دولار"},
		{"1200", "USD", "ar", "ألف ومائتا دولار"},
		{"2000", "USD", "ar", "ألفا دولار"},
		{"3000", "USD", "ar", "ثلاثة آلاف دولار"},
		{"1234.56", "USD", "ar", "ألف ومائتان وأربعة وثلاثون دولارًا وستة وخمسون سنتًا"},
		{"5", "AED", "ar", "خمسة دراهم"},
		{"1", "ILS", "he", "שקל אחד"},
		{"2", "ILS", "he", "שני שקלים"},
		{"20.50", "ILS", "he", "עשרים שקלים וחמישים אגורות"},
		{"1234.56", "USD", "he", "אלף מאתיים שלושים וארבעה דולרים וחמישים ושישה סנטים"},
		// What it cannot say comes back for the synthesizer to read.
		{"1,234", "USD", "en", "1,234 USD"},
		{"12", "XYZ", "en", "12 XYZ"},
		{"12", "INR", "ar", "12 INR"},
		{"12.5", "USD", "it", "12.5 USD"},
		{"", "USD", "en", "USD"},
	} {
		if got := Money(tc.decimal, tc.currency, tc.locale); got != tc.want {
			t.Errorf("Money(%q, %q, %q) = %q, want %q", tc.decimal, tc.currency, tc.locale, got, tc.want)
		}
	}
}

func TestTextMoney(t *testing.T) {
	for locale, cases := range map[string][]struct{ in, want string }{
		"en": {
			{"It costs $1,234.56.", "It costs one thousand two hundred thirty-four dollars and fifty-six cents."},
			{"$20.00", "twenty dollars"},
			{"$1.00", "one dollar"},
			{"$0.05", "five cents"},
			{"-$20.00", "minus twenty dollars"},
			{"+$60.00", "plus sixty dollars"},
			{"$-5", "minus five dollars"},
			{"€5", "five euros"},
			{"£3.50", "three pounds and fifty pence"},
			{"5 €", "five euros"},
			{"1.234,56 €", "one thousand two hundred thirty-four euros and fifty-six cents"},
			{"€5,50", "five euros and fifty cents"},
			{"US$20", "twenty dollars"},
			{"USD 20", "twenty dollars"},
			{"20 USD", "twenty dollars"},
			{"$5 million", "five million dollars"},
			{"$1.5 billion", "one point five billion dollars"},
			{"¥500", "five hundred yen"},
			{"$5k", "$5k"},
			{"a $ sign", "a $ sign"},
			{"$12345678901234567", "one two three four five six seven eight nine zero one two three four five six seven dollars"},
		},
		"es": {
			{"$20.00", "veinte dólares"},
			{"1.234,56 €", "mil doscientos treinta y cuatro euros con cincuenta y seis céntimos"},
			{"1 234,56 €", "mil doscientos treinta y cuatro euros con cincuenta y seis céntimos"},
			{"1\u202f234,56\u00a0€", "mil doscientos treinta y cuatro euros con cincuenta y seis céntimos"},
			{"$1", "un dólar"},
			{"$21", "veintiún dólares"},
			{"£21", "veintiuna libras"},
			{"$5 millones", "cinco millones de dólares"},
			{"-5 €", "menos cinco euros"},
		},
		"es-MX": {
			{"$1,234.50", "mil doscientos treinta y cuatro pesos con cincuenta centavos"},
			{"US$20", "veinte dólares"},
		},
		"fr": {
			{"$20.00", "vingt dollars"},
			{"1 234,56 €", "mille deux cent trente-quatre euros et cinquante-six centimes"},
			{"1\u202f234,56\u00a0€", "mille deux cent trente-quatre euros et cinquante-six centimes"},
			{"1 $", "un dollar"},
			{"21 $", "vingt et un dollars"},
			{"80 €", "quatre-vingts euros"},
			{"1 000 000 €", "un million d'euros"},
		},
		"de": {
			{"$20.00", "zwanzig Dollar"},
			{"1.234,56 €", "eintausendzweihundertvierunddreißig Euro und sechsundfünfzig Cent"},
			{"1 €", "ein Euro"},
			{"2,50 €", "zwei Euro und fünfzig Cent"},
			{"1 Million €", "eine Million €"},
			{"€1 Million", "eine Million Euro"},
		},
		"pt": {
			{"$20.00", "vinte dólares"},
			{"$1", "um dólar"},
			{"$2", "dois dólares"},
			{"R$ 1.234,56", "mil duzentos e trinta e quatro reais e cinquenta e seis centavos"},
			{"R$1", "um real"},
			{"£2", "duas libras"},
		},
		"ar": {
			{"$20.00", "عشرون دولارًا"},
			{"$1", "دولار واحد"},
			{"$2", "دولاران"},
			{"٢٠ $", "عشرون دولارًا"},
			{"$1,234.56", "ألف ومائتان وأربعة وثلاثون دولارًا وستة وخمسون سنتًا"},
			{"١٬٢٣٤٫٥٦ $", "ألف ومائتان وأربعة وثلاثون دولارًا وستة وخمسون سنتًا"},
			{"50 د.إ", "خمسون درهمًا"},
		},
		"he": {
			{"₪20", "עשרים שקלים"},
			{"20 ש\"ח", "עשרים שקלים"},
			{"$20.00", "עשרים דולרים"},
		},
		"it": {{"$20.00", "$20.00"}},
	} {
		for _, tc := range cases {
			if got := Text(tc.in, locale); got != tc.want {
				t.Errorf("Text(%q, %q) = %q, want %q", tc.in, locale, got, tc.want)
			}
		}
	}
}
