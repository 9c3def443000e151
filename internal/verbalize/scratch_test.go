package verbalize

import (
	"fmt"
	"testing"
)

func TestScratch(t *testing.T) {
	for _, c := range [][2]string{
		{"en", "It costs $1,234.56 today."}, {"en", "$20.00"}, {"en", "$1.00"}, {"en", "$0.05"}, {"en", "-$20.00"}, {"en", "+$60.00"},
		{"en", "€5 and £3.50 and 5 € and 1.234,56 € and US$20"}, {"en", "3.5 and 1,234 and -7 and 65% and 4.5%"},
		{"en", "2026-11-23"}, {"en", "Nov 23"}, {"en", "November 23, 2026"}, {"en", "23 November 2026"}, {"en", "14:05 and 9:30 AM and 9am and 09:00"},
		{"en", "Mr. Smith & Dr. Jones @ St. Louis, e.g. #3, No. 5, 3x faster, 10km, 20°C. Done etc. Then"},
		{"en", "Call 555-1234 or (555) 123-4567 or +1-800-555-0100. Version 2.10.3. mp3 A4 COVID-19 5G 1st 22nd"},
		{"en", "$5 million, 1990s, 007, 12345678901234567890, Hi 👋🏽 there 👨‍👩‍👧"},
		{"es", "$20.00 y 1.234,56 € y $1 y $21 y 21 € y 3,5 y 3.5 y 65% y 4,5% y 2026-11-23 y 23 de noviembre de 2026 y 14:05 y 1 hora y 21 personas y £1 y 200 libras y 1 de enero"},
		{"es-MX", "$20.00 y 1,234.56 y 3.5"},
		{"fr", "$20.00, 1 234,56 €, 1.234,56 €, 21 $, 1 $, 65 %, 80 €, 200 000 €, 1 000 000 €, 2026-11-23, 1er mai 2026, 14h05, 14:00, 21 heures, 1 heure, M. Dupont, 1 livre"},
		{"fr-BE", "71, 80, 91"}, {"fr-CH", "71, 80, 91"},
		{"de", "$20.00, 1.234,56 €, 1 €, 65 %, 23.11.2026, 23. November 2026, 2026-11-23, 14:05 Uhr, 1 Uhr, 1 Stunde, z. B. Hr. Müller, 1999-01-01, 3x"},
		{"de-CH", "30 und 1'234.50 CHF"},
		{"pt", "$20.00, $1, $2, R$ 1.234,56, 65%, 2026-11-01, 14h05, 14h, 2 horas, 1 libra, 2 libras, 1.000.000 €"},
		{"pt-PT", "16, 17, 19, 1,50 €"},
		{"ar", "$20.00 و $1 و $2 و $3 و $11 و $100 و $200 و $2000 و 1234.56 و ٢٠ و 65% و 2026-11-23 و 14:05 و $1,234.56"},
		{"it", "$20.00 e 👋 3,5"},
	} {
		fmt.Printf("%s: %s\n    → %s\n", c[0], c[1], Text(c[1], c[0]))
	}
	for _, c := range []struct{ d, c, l string }{{"1234.56", "USD", "en"}, {"1234.56", "EUR", "es"}, {"1234.56", "EUR", "fr"}, {"1234.56", "EUR", "de"}, {"1234.56", "BRL", "pt"}, {"1234.56", "USD", "ar"}, {"1000000", "EUR", "fr"}, {"21", "USD", "es"}, {"21", "EUR", "fr"}, {"1", "GBP", "fr"}} {
		fmt.Printf("Money(%s %s %s) = %s\n", c.d, c.c, c.l, Money(c.d, c.c, c.l))
	}
}
