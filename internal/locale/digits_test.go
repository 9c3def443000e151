package locale

import (
	"testing"
	"unicode"
)

// TestEveryScript: the digits of each script run from zero to nine, which DigitValue relies on, and
// are read; letters and signs are not digits.
func TestEveryScript(t *testing.T) {
	for _, zero := range []rune{'0', '٠', '۰', '०', '০', '๐', '０', '𝟎'} {
		for d := range rune(10) {
			if got := DigitValue(zero + d); got != int(d) {
				t.Errorf("DigitValue(%q) = %d, want %d", zero+d, got, d)
			}
		}
	}
	for _, r := range []rune{'a', 'ش', '•', '½', '²', ' '} {
		if DigitValue(r) != -1 {
			t.Errorf("DigitValue(%q) = %d, want -1", r, DigitValue(r))
		}
	}
	for _, rg := range unicode.Nd.R16 {
		if DigitValue(rune(rg.Lo)) != 0 || rg.Stride != 1 || (rg.Hi-rg.Lo+1)%10 != 0 {
			t.Errorf("Nd range %+v is not runs of ten from zero", rg)
		}
	}
	for _, rg := range unicode.Nd.R32 {
		if DigitValue(rune(rg.Lo)) != 0 || rg.Stride != 1 || (rg.Hi-rg.Lo+1)%10 != 0 {
			t.Errorf("Nd range %+v is not runs of ten from zero", rg)
		}
	}
}

func BenchmarkValueOfALetter(b *testing.B) {
	for b.Loop() {
		DigitValue('ش')
	}
}
