package quota_test

import (
	"math"
	"testing"

	"github.com/convengine/engine/internal/quota"
)

// TestOverDoesNotOverflow: a count near its limit is over it whatever is added, where the sum
// of the two would not fit in an int64; a limit of 0 is none.
func TestOverDoesNotOverflow(t *testing.T) {
	for _, tc := range []struct {
		have, add, max int64
		over           bool
	}{
		{have: 0, add: 100, max: 1000},
		{have: 900, add: 100, max: 1000},
		{have: 901, add: 100, max: 1000, over: true},
		{have: math.MaxInt64 - 10, add: 100, max: math.MaxInt64, over: true},
		{have: 10, add: math.MaxInt64, max: math.MaxInt64, over: true},
		{have: 2000, add: 1, max: 1000, over: true},
		{have: math.MaxInt64, add: math.MaxInt64, max: 0},
		{have: 5, add: 0, max: 1},
	} {
		c := quota.Counter{Max: tc.max, Add: tc.add}
		if got := c.Over(tc.have); got != tc.over {
			t.Errorf("Over(%d) of %d added under %d = %t, want %t", tc.have, tc.add, tc.max, got, tc.over)
		}
	}
}
