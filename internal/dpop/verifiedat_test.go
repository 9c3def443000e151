package dpop

import (
	"strings"
	"testing"
	"time"
)

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		raw  string
		want time.Time
		err  string
	}{
		{raw: `"2026-01-02T15:04:05Z"`, want: time.Date(2026, 1, 2, 15, 4, 5, 0, time.UTC)},
		{raw: `1767366245000`, want: time.UnixMilli(1767366245000)},
		{raw: `1767366245`, err: "epoch seconds"},
		{raw: `null`, err: "is required"},
		{raw: ``, err: "is required"},
		{raw: `"yesterday"`, err: "RFC 3339"},
		{raw: `-5`, err: "positive"},
		{raw: `true`, err: "a number"},
	} {
		t.Run(tc.raw, func(t *testing.T) {
			got, err := ParseVerifiedAt([]byte(tc.raw))
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("ParseVerifiedAt(%s) = %v, %v; want an error with %q", tc.raw, got, err, tc.err)
				}
				return
			}
			if err != nil || !got.Equal(tc.want) {
				t.Fatalf("ParseVerifiedAt(%s) = %v, %v; want %v", tc.raw, got, err, tc.want)
			}
		})
	}
}
