package verbalize

import "testing"

func TestNumber(t *testing.T) {
	for locale, cases := range map[string][]struct {
		n    int64
		want string
	}{
		"en": {
			{0, "zero"}, {7, "seven"}, {13, "thirteen"}, {21, "twenty-one"}, {40, "forty"},
			{100, "one hundred"}, {105, "one hundred five"}, {1234, "one thousand two hundred thirty-four"},
			{20000, "twenty thousand"}, {1_000_001, "one million one"},
			{2_500_000_000, "two billion five hundred million"},
			{999_999_999_999_999, "nine hundred ninety-nine trillion nine hundred ninety-nine billion nine hundred ninety-nine million nine hundred ninety-nine thousand nine hundred ninety-nine"},
			{1_000_000_000_000_000, "one zero zero zero zero zero zero zero zero zero zero zero zero zero zero zero"},
			{-42, "minus forty-two"},
		},
		"es": {
			{0, "cero"}, {1, "uno"}, {15, "quince"}, {16, "dieciséis"}, {21, "veintiuno"},
			{22, "veintidós"}, {23, "veintitrés"}, {26, "veintiséis"}, {31, "treinta y uno"},
			{100, "cien"}, {101, "ciento uno"}, {115, "ciento quince"}, {200, "doscientos"},
			{500, "quinientos"}, {700, "setecientos"}, {900, "novecientos"}, {1000, "mil"},
			{1001, "mil uno"}, {2026, "dos mil veintiséis"}, {21000, "veintiún mil"},
			{100_000, "cien mil"}, {101_000, "ciento un mil"}, {1_000_000, "un millón"},
			{2_000_000, "dos millones"}, {21_000_000, "veintiún millones"},
			{1_000_000_000, "mil millones"}, {1_000_000_000_000, "un billón"}, {-3, "menos tres"},
		},
		"fr": {
			{0, "zéro"}, {1, "un"}, {17, "dix-sept"}, {21, "vingt et un"}, {22, "vingt-deux"},
			{61, "soixante et un"}, {70, "soixante-dix"}, {71, "soixante et onze"},
			{72, "soixante-douze"}, {80, "quatre-vingts"}, {81, "quatre-vingt-un"},
			{90, "quatre-vingt-dix"}, {91, "quatre-vingt-onze"}, {99, "quatre-vingt-dix-neuf"},
			{100, "cent"}, {200, "deux cents"}, {201, "deux cent un"}, {280, "deux cent quatre-vingts"},
			{1000, "mille"}, {1234, "mille deux cent trente-quatre"}, {80_000, "quatre-vingt mille"},
			{200_000, "deux cent mille"}, {1_000_000, "un million"}, {80_000_000, "quatre-vingts millions"},
			{2_000_000_000, "deux milliards"}, {-1, "moins un"},
		},
		"fr-BE": {{70, "septante"}, {71, "septante et un"}, {80, "quatre-vingts"}, {95, "nonante-cinq"}},
		"fr-CH": {{80, "huitante"}, {81, "huitante et un"}, {99, "nonante-neuf"}},
		"de": {
			{0, "null"}, {1, "eins"}, {12, "zwölf"}, {17, "siebzehn"}, {21, "einundzwanzig"},
			{30, "dreißig"}, {99, "neunundneunzig"}, {100, "einhundert"}, {101, "einhunderteins"},
			{1000, "eintausend"}, {1234, "eintausendzweihundertvierunddreißig"},
			{21_000, "einundzwanzigtausend"}, {1_000_000, "eine Million"},
			{2_500_000, "zwei Millionen fünfhunderttausend"}, {1_000_000_001, "eine Milliarde eins"},
			{-8, "minus acht"},
		},
		"de-CH": {{30, "dreissig"}, {1234, "eintausendzweihundertvierunddreissig"}},
		"pt": {
			{0, "zero"}, {1, "um"}, {2, "dois"}, {14, "catorze"}, {16, "dezesseis"},
			{19, "dezenove"}, {21, "vinte e um"}, {100, "cem"}, {101, "cento e um"},
			{123, "cento e vinte e três"}, {200, "duzentos"}, {500, "quinhentos"}, {1000, "mil"},
			{1001, "mil e um"}, {1100, "mil e cem"}, {1234, "mil duzentos e trinta e quatro"},
			{2026, "dois mil e vinte e seis"}, {1_000_000, "um milhão"},
			{1_500_000, "um milhão e quinhentos mil"}, {2_000_000, "dois milhões"},
			{1_000_000_000, "um bilhão"}, {-2, "menos dois"},
		},
		"pt-PT": {{16, "dezasseis"}, {17, "dezassete"}, {19, "dezanove"}, {1_000_000_000, "mil milhões"}, {1_000_000_000_000, "um bilião"}},
		"ar": {
			{0, "صفر"}, {1, "واحد"}, {2, "اثنان"}, {3, "ثلاثة"}, {10, "عشرة"}, {11, "أحد عشر"},
			{12, "اثنا عشر"}, {15, "خمسة عشر"}, {20, "عشرون"}, {21, "واحد وعشرون"},
			{99, "تسعة وتسعون"}, {100, "مائة"}, {200, "مائتان"}, {300, "ثلاثمائة"},
			{1000, "ألف"}, {1234, "ألف ومائتان وأربعة وثلاثون"}, {2000, "ألفان"},
			{3000, "ثلاثة آلاف"}, {11_000, "أحد عشر ألفًا"}, {100_000, "مائة ألف"},
			{200_000, "مائتا ألف"}, {999_999, "تسعمائة وتسعة وتسعون ألفًا وتسعمائة وتسعة وتسعون"},
			{1_000_000, "مليون"}, {2_000_000, "مليونان"}, {5_000_000, "خمسة ملايين"},
			{-5, "سالب خمسة"},
		},
		"he": {
			{0, "אפס"}, {1, "אחת"}, {2, "שתיים"}, {11, "אחת עשרה"}, {12, "שתים עשרה"},
			{21, "עשרים ואחת"}, {101, "מאה ואחת"}, {200, "מאתיים"}, {300, "שלוש מאות"},
			{1200, "אלף ומאתיים"}, {1234, "אלף מאתיים שלושים וארבע"}, {2000, "אלפיים"},
			{2026, "אלפיים עשרים ושש"}, {3000, "שלושת אלפים"}, {11_000, "אחד עשר אלף"},
			{21_000, "עשרים ואחד אלף"}, {2_000_000, "שני מיליון"}, {3_000_000, "שלושה מיליון"},
			{-4, "מינוס ארבע"},
		},
		"it": {{20, "20"}, {-3, "-3"}},
	} {
		for _, tc := range cases {
			if got := Number(tc.n, locale); got != tc.want {
				t.Errorf("Number(%d, %q) = %q, want %q", tc.n, locale, got, tc.want)
			}
		}
	}
}

func TestOrdinal(t *testing.T) {
	for _, tc := range []struct {
		locale string
		n      int64
		want   string
	}{
		{"en", 1, "first"}, {"en", 2, "second"}, {"en", 3, "third"}, {"en", 12, "twelfth"},
		{"en", 20, "twentieth"}, {"en", 23, "twenty-third"}, {"en", 101, "one hundred first"},
		{"fr", 1, "premier"}, {"fr", 2, "deuxième"}, {"fr", 5, "cinquième"}, {"fr", 9, "neuvième"},
		{"fr", 21, "vingt et unième"}, {"fr", 80, "quatre-vingtième"}, {"fr", 1000, "millième"},
		{"de", 1, "ersten"}, {"de", 3, "dritten"}, {"de", 7, "siebten"}, {"de", 8, "achten"},
		{"de", 19, "neunzehnten"}, {"de", 20, "zwanzigsten"}, {"de", 23, "dreiundzwanzigsten"},
		{"de", 103, "einhundertdritten"},
		{"es", 3, "tercero"}, {"pt", 7, "sétimo"},
		{"ar", 1, "الأول"}, {"ar", 11, "الحادي عشر"}, {"ar", 23, "الثالث والعشرون"},
		{"ar", 30, "الثلاثون"}, {"ar", 31, "الحادي والثلاثون"},
	} {
		if got := lookup(tc.locale).ordinal(tc.n, masc); got != tc.want {
			t.Errorf("ordinal(%d, %q) = %q, want %q", tc.n, tc.locale, got, tc.want)
		}
	}
}

func TestLookup(t *testing.T) {
	for locale, want := range map[string]string{
		"en": "en", "en-US": "en", "EN_gb": "en", "es-419": "es", "pt-BR": "pt", "ar-EG": "ar",
		"de-Latn-CH": "de", "zz": "", "": "", "-": "",
	} {
		l := lookup(locale)
		if got := ""; l != nil {
			got = l.tag
			if got != want {
				t.Errorf("lookup(%q) = %q, want %q", locale, got, want)
			}
		} else if want != "" {
			t.Errorf("lookup(%q) = nil, want %q", locale, want)
		}
	}
	if lookup("es-MX").dollar != "MXN" || lookup("es").dollar != "USD" || lookup("de-Latn-CH").decimal != '.' {
		t.Error("regions are not applied")
	}
}
