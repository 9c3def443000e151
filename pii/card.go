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

// issuer is a range of issuer identification numbers and the lengths of its cards.
type issuer struct {
	lo, hi  int    // inclusive range of the first digits
	digits  int    // how many leading digits lo and hi cover
	lengths uint32 // bit n set: the network issues cards of n digits
}

// lengths returns the bit set of the lengths from lo to hi and of the others.
func lengths(lo, hi int, others ...int) uint32 {
	var b uint32
	for n := lo; n <= hi; n++ {
		b |= 1 << n
	}
	for _, n := range others {
		b |= 1 << n
	}
	return b
}

// issuers are the prefix ranges of the networks and their card lengths, as the networks
// publish them. Luhn alone lets one random number in ten through; the prefixes and lengths are
// what keep amounts and reference numbers out.
var issuers = []issuer{
	{4, 4, 1, lengths(16, 16, 13, 19)}, // Visa
	{51, 55, 2, lengths(16, 16)},       // Mastercard
	{2221, 2720, 4, lengths(16, 16)},   // Mastercard
	{34, 34, 2, lengths(15, 15)},       // American Express
	{37, 37, 2, lengths(15, 15)},       // American Express
	{6011, 6011, 4, lengths(16, 19)},   // Discover
	{644, 649, 3, lengths(16, 19)},     // Discover
	{65, 65, 2, lengths(16, 19)},       // Discover
	{3528, 3589, 4, lengths(16, 19)},   // JCB
	{300, 305, 3, lengths(14, 19)},     // Diners Club
	{36, 36, 2, lengths(14, 19)},       // Diners Club
	{38, 38, 2, lengths(14, 19)},       // Diners Club
	{62, 62, 2, lengths(16, 19)},       // UnionPay
	{50, 50, 2, lengths(12, 19)},       // Maestro
	{56, 69, 2, lengths(12, 19)},       // Maestro
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
		if p >= is.lo && p <= is.hi && is.lengths&(1<<n) != 0 {
			return true
		}
	}
	return false
}

// isCard reports whether digits are a card number: a known issuer, the issuer's length, Luhn.
func isCard(digits string) bool { return knownIssuer(digits) && luhn(digits) }

// cardShape reports whether typed groups of these sizes, joined by sep, are a way to write a
// card number: all at once; in fours, threes, pairs or digit by digit, the last group
// shorter or not (4-4-4-4, 4-4-4-4-3, 3-3-3-3-3-1, 1-1-1…); or 4-6-5 and 4-6-4 (American
// Express, Diners). Groups of three all full joined by a comma, a full stop or an apostrophe
// are an amount's thousands ("411,111,111,111,111").
func cardShape(groups []int, sep string) bool {
	switch len(groups) {
	case 1:
		return true
	case 3:
		if groups[0] == 4 && groups[1] == 6 && (groups[2] == 5 || groups[2] == 4) {
			return true
		}
	}
	size := groups[0]
	if size > 4 {
		return false
	}
	for i, g := range groups {
		if i < len(groups)-1 && g != size || g < 1 || g > size {
			return false
		}
	}
	return !(size == 3 && groups[len(groups)-1] == 3 && (sep == "," || sep == "." || sep == "'"))
}
