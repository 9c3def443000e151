package judge

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

type verdict struct {
	pass   bool
	reason string
}

// parse reads the verdict in a model's answer: the whole answer as the object, or else the
// first object with a "pass" member found in it, past a <think> section, a code fence or
// prose. pass must be a JSON boolean.
func parse(content string) (verdict, error) {
	text := content
	if i := strings.LastIndex(text, "</think>"); i >= 0 {
		text = text[i+len("</think>"):]
	}
	for i := 0; i < len(text); i++ {
		if text[i] != '{' {
			continue
		}
		dec := json.NewDecoder(strings.NewReader(text[i:]))
		var obj map[string]json.RawMessage
		if dec.Decode(&obj) != nil {
			continue
		}
		raw, ok := obj["pass"]
		if !ok {
			continue
		}
		var v verdict
		if err := json.Unmarshal(raw, &v.pass); err != nil || bytes.Equal(raw, []byte("null")) {
			return verdict{}, fmt.Errorf(`%w: "pass" is %s, not true or false`, ErrNoVerdict, excerpt(string(raw), 40))
		}
		if r, ok := obj["reason"]; ok {
			if err := json.Unmarshal(r, &v.reason); err != nil {
				return verdict{}, fmt.Errorf(`%w: "reason" is %s, not a string`, ErrNoVerdict, excerpt(string(r), 40))
			}
		}
		return v, nil
	}
	return verdict{}, fmt.Errorf(`%w: expected {"pass": true|false, "reason": "…"}, the model said: %s`, ErrNoVerdict,
		excerpt(strings.Join(strings.Fields(content), " "), 160))
}
