package dpop

// The moment a device check passed, as clients send it in auth.verifiedAt of an execute.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"time"
)

// maxEpochSecondsAsMillis separates seconds from milliseconds: 1e11 milliseconds is March 1973,
// before any device check, and 1e11 seconds is in the year 5138.
const maxEpochSecondsAsMillis = 1e11

// ParseVerifiedAt reads an RFC 3339 time or a number of milliseconds since the epoch. Seconds (what
// Date().timeIntervalSince1970 gives on iOS) are refused with a message that says so rather
// than read as a moment in 1970. Its errors are the detail of a problem about the field.
func ParseVerifiedAt(raw json.RawMessage) (time.Time, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return time.Time{}, errors.New("is required")
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		t, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			return time.Time{}, errors.New("must be an RFC 3339 time such as \"2026-01-02T15:04:05Z\" or epoch milliseconds")
		}
		return t, nil
	}
	var n float64
	if json.Unmarshal(raw, &n) != nil || math.IsNaN(n) {
		return time.Time{}, errors.New("must be an RFC 3339 time or epoch milliseconds (a number)")
	}
	switch {
	case n <= 0 || n > 1<<53:
		return time.Time{}, errors.New("must be a positive number of epoch milliseconds")
	case n < maxEpochSecondsAsMillis:
		return time.Time{}, fmt.Errorf("is %s, which reads as epoch seconds: send milliseconds (seconds × 1000) or an RFC 3339 time", strconv.FormatFloat(n, 'f', -1, 64))
	}
	return time.UnixMicro(int64(n * 1000)), nil
}
