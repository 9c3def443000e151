package demobank

import (
	"math"
	"strconv"
)

// cents is an amount of US dollars in cents; the bank never does arithmetic on floats.
type cents int64

// dollarsToCents converts a JSON amount, reporting false when it has more than two decimals.
// The amount must be in range of an int64 of cents.
func dollarsToCents(d float64) (cents, bool) {
	c := math.Round(d * 100)
	return cents(c), math.Abs(d*100-c) < 1e-6
}

// dollars returns c in dollars, as the API's JSON numbers are written.
func (c cents) dollars() float64 { return float64(c) / 100 }

// String formats c as "$1,234.56" or "-$4.50".
func (c cents) String() string {
	if c < 0 {
		return "-" + (-c).String()
	}
	whole := strconv.FormatInt(int64(c/100), 10)
	b := []byte{'$'}
	for i := range len(whole) {
		if i > 0 && (len(whole)-i)%3 == 0 {
			b = append(b, ',')
		}
		b = append(b, whole[i])
	}
	frac := int64(c % 100)
	return string(append(b, '.', byte('0'+frac/10), byte('0'+frac%10)))
}

// signed formats c with its sign always written: "+$120.00", "-$4.50".
func (c cents) signed() string {
	if c < 0 {
		return c.String()
	}
	return "+" + c.String()
}
