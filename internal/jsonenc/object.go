package jsonenc

import (
	"bytes"
	"encoding/json"
)

// IsObject reports whether raw is one JSON object (not null).
func IsObject(raw []byte) bool {
	var m map[string]json.RawMessage
	return json.Unmarshal(raw, &m) == nil && m != nil
}

// Compact returns raw without insignificant white space, or a copy of raw as it is when it is
// not JSON.
func Compact(raw []byte) []byte {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return append([]byte(nil), raw...)
	}
	return b.Bytes()
}
