package pii

// luhn reports whether the digits (ASCII '0'-'9') pass the Luhn check.
func luhn(digits string) bool {
	sum := 0
	double := false
	for i := len(digits) - 1; i >= 0; i-- {
		d := int(digits[i] - '0')
		if d < 0 || d > 9 {
			return false
		}
		if double {
			d *= 2
			if d > 9 {
				d -= 9
			}
		}
		sum += d
		double = !double
	}
	return len(digits) > 0 && sum%10 == 0
}

// issuer is a range of issuer identification number prefixes and the lengths its cards have.
type issuer struct {
	lo, hi int // inclusive range of the first len(digits of lo) digits
	digits int // how many leading digits lo and hi cover
	minLen int
	maxLen int
	name   string
}

// issuers are the prefix ranges of the networks, as the networks publish them. Luhn alone lets
// one random number in ten through; the prefixes and their lengths are what keep amounts and
// reference numbers out.
var issuers = []issuer{
	{4, 4, 1, 13, 19, "visa"},
	{51, 55, 2, 16, 16, "mastercard"},
	{2221, 2720, 4, 16, 16, "mastercard"},
	{34, 34, 2, 15, 15, "amex"},
	{37, 37, 2, 15, 15, "amex"},
	{6011, 6011, 4, 16, 19, "discover"},
	{644, 649, 3, 16, 19, "discover"},
	{65, 65, 2, 16, 19, "discover"},
	{3528, 3589, 4, 16, 19, "jcb"},
	{300, 305, 3, 14, 19, "diners"},
	{36, 36, 2, 14, 19, "diners"},
	{38, 38, 2, 14, 19, "diners"},
	{62, 62, 2, 16, 19, "unionpay"},
	{50, 50, 2, 12, 19, "maestro"},
	{56, 69, 2, 12, 19, "maestro"},
}

// knownIssuer reports whether digits start with a known issuer prefix and have a length that
// issuer uses.
func knownIssuer(digits string) bool {
	n := len(digits)
	if n < 12 || n > 19 {
		return false
	}
	for _, is := range issuers {
		p := 0
		for i := range is.digits {
			p = p*10 + int(digits[i]-'0')
		}
		if p >= is.lo && p <= is.hi && n >= is.minLen && n <= is.maxLen {
			return true
		}
	}
	return false
}

// isCard reports whether digits are a card number: a known issuer, the issuer's length, Luhn.
func isCard(digits string) bool { return knownIssuer(digits) && luhn(digits) }

// cardShape reports whether typed groups of these sizes are a usual way to write a card
// number: all at once; in fours, the last group shorter (4-4-4-4, 4-4-4-4-3, 4-4-4-1…);
// or 4-6-5 and 4-6-4 (American Express, Diners).
func cardShape(groups []int) bool {
	switch len(groups) {
	case 1:
		return true
	case 3:
		if groups[0] == 4 && groups[1] == 6 && (groups[2] == 5 || groups[2] == 4) {
			return true
		}
	}
	for i, g := range groups {
		if i < len(groups)-1 && g != 4 || g < 1 || g > 4 {
			return false
		}
	}
	return true
}
