package elevenlabs

import (
	"strings"
	"testing"
)

// FuzzStreamMessage reads what the input stream could send: nothing panics, a message is audio
// (base64) or an error whose text is printable and short.
func FuzzStreamMessage(f *testing.F) {
	f.Add([]byte(`{"audio":"AAAB","isFinal":null,"normalizedAlignment":{"chars":["H","i"," "],"charStartTimesMs":[0,3],"charDurationsMs":[3,2]},"alignment":{"chars":["H","i"]}}`))
	f.Add([]byte(`{"audio":null,"isFinal":true}`))
	f.Add([]byte(`{"message":"Invalid API key","error":"invalid_api_key","code":1008}`))
	f.Add([]byte(`{"audio":"!!!"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := parseMessage(data)
		if err != nil {
			if s := err.Error(); len(s) > 200 || strings.ContainsFunc(s, func(r rune) bool { return r < 0x20 || r > 0x7e }) {
				t.Fatalf("error %q", s)
			}
			return
		}
		if m.Alignment != nil && spoken(m.Alignment.Chars) > len(m.Alignment.Chars) {
			t.Fatal("more characters spoken than aligned")
		}
	})
}
