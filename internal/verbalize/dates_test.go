package verbalize

import "testing"

func TestTextDates(t *testing.T) {
	for locale, cases := range map[string][]struct{ in, want string }{
		"en": {
			{"2026-11-23", "November twenty-third, twenty twenty-six"},
			{"Due 2026-11-23.", "Due November twenty-third, twenty twenty-six."},
			{"November 23, 2026", "November twenty-third, twenty twenty-six"},
			{"Nov 23", "November twenty-third"},
			{"Nov. 23rd, 2026", "November twenty-third, twenty twenty-six"},
			{"November 2026", "November twenty twenty-six"},
			{"23 November 2026", "the twenty-third of November, twenty twenty-six"},
			{"1st Jan", "the first of January"},
			{"11/23/2026", "November twenty-third, twenty twenty-six"},
			{"2000-01-01", "January first, two thousand"},
			{"1905-05-09", "May ninth, nineteen oh five"},
			{"in 1999", "in nineteen ninety-nine"},
			{"1999 people", "one thousand nine hundred ninety-nine people"},
			{"you may 5", "you may five"},
			{"2026-13-01", "two thousand twenty-six-thirteen-zero one"},
		},
		"en-GB": {
			{"23/11/2026", "the twenty-third of November, twenty twenty-six"},
			{"2026-11-23", "November twenty-third, twenty twenty-six"},
		},
		"es": {
			{"2026-11-23", "veintitrés de noviembre de dos mil veintiséis"},
			{"23 de noviembre de 2026", "veintitrés de noviembre de dos mil veintiséis"},
			{"1 de enero", "uno de enero"},
			{"23/11/2026", "veintitrés de noviembre de dos mil veintiséis"},
		},
		"fr": {
			{"2026-11-23", "vingt-trois novembre deux mille vingt-six"},
			{"1er mai 2026", "premier mai deux mille vingt-six"},
			{"1 mai", "premier mai"},
			{"le 21 juillet", "le vingt et un juillet"},
		},
		"de": {
			{"2026-11-23", "dreiundzwanzigsten November zweitausendsechsundzwanzig"},
			{"am 23.11.2026", "am dreiundzwanzigsten November zweitausendsechsundzwanzig"},
			{"am 1. Mai 1999", "am ersten Mai neunzehnhundertneunundneunzig"},
			{"seit 1989", "seit neunzehnhundertneunundachtzig"},
		},
		"pt": {
			{"2026-11-23", "vinte e três de novembro de dois mil e vinte e seis"},
			{"1 de maio de 2026", "primeiro de maio de dois mil e vinte e seis"},
			{"01/05/2026", "primeiro de maio de dois mil e vinte e seis"},
		},
		"ar": {
			{"2026-11-23", "الثالث والعشرون من نوفمبر ألفان وستة وعشرون"},
			{"1 يناير", "الأول من يناير"},
			{"٢٠٢٦-٠١-٠١", "الأول من يناير ألفان وستة وعشرون"},
		},
		"he": {
			{"2026-11-23", "עשרים ושלושה בנובמבר אלפיים עשרים ושש"},
			{"2 בינואר", "שניים בינואר"},
		},
	} {
		for _, tc := range cases {
			if got := Text(tc.in, locale); got != tc.want {
				t.Errorf("Text(%q, %q) = %q, want %q", tc.in, locale, got, tc.want)
			}
		}
	}
}

func TestTextTimes(t *testing.T) {
	for locale, cases := range map[string][]struct{ in, want string }{
		"en": {
			{"14:05", "two oh five PM"},
			{"14:00", "two PM"},
			{"at 9:30 AM.", "at nine thirty AM."},
			{"9:30", "nine thirty"},
			{"09:30", "nine thirty AM"},
			{"00:15", "twelve fifteen AM"},
			{"12:00", "twelve o'clock"},
			{"9am", "nine AM"},
			{"at 7 p.m. Then", "at seven PM. Then"},
			{"at 7 p.m. tonight", "at seven PM tonight"},
			{"14:05:30", "two oh five and thirty seconds PM"},
			{"25:00", "twenty-five:zero zero"},
			{"John 3:16", "John three sixteen"},
		},
		"es": {
			{"a las 14:05", "a las catorce y cinco"},
			{"a las 21:00", "a las veintiuna en punto"},
			{"a la 1:30", "a la una y treinta"},
		},
		"fr": {
			{"à 14:05", "à quatorze heures cinq"},
			{"à 14h05", "à quatorze heures cinq"},
			{"à 1h", "à une heure"},
			{"à 21h30", "à vingt et une heures trente"},
			{"à 0h15", "à zéro heure quinze"},
		},
		"de": {
			{"um 14:05", "um vierzehn Uhr fünf"},
			{"um 14:05 Uhr", "um vierzehn Uhr fünf"},
			{"um 1:00 Uhr", "um ein Uhr"},
			{"um 1 Uhr", "um ein Uhr"},
		},
		"pt": {
			{"às 14:05", "às catorze e cinco"},
			{"às 14h", "às catorze horas"},
			{"à 1h", "à uma hora"},
			{"às 21h", "às vinte e uma horas"},
		},
		"ar": {
			{"الساعة 14:05", "الساعة أربعة عشر وخمسة"},
		},
		"he": {
			{"14:05", "ארבע עשרה וחמש"},
		},
	} {
		for _, tc := range cases {
			if got := Text(tc.in, locale); got != tc.want {
				t.Errorf("Text(%q, %q) = %q, want %q", tc.in, locale, got, tc.want)
			}
		}
	}
}
