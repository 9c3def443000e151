package deepgram

import (
	"bytes"
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

// FuzzMessages feeds a live connection's reader what a hostile or broken provider could send,
// one message a line, as read does: nothing panics, the final results stay in the order of
// their start, and the transcript is the finals' text joined, whatever came in between.
func FuzzMessages(f *testing.F) {
	f.Add([]byte(`{"type":"Results","start":0.5,"is_final":true,"speech_final":true,"from_finalize":true,"channel":{"alternatives":[{"transcript":"my balance","confidence":0.9}]}}` + "\n" +
		`{"type":"Results","start":0,"is_final":true,"channel":{"alternatives":[{"transcript":"what is"}]}}` + "\n" + `{"type":"UtteranceEnd","last_word_end":1.2}`))
	f.Add([]byte(`{"type":"Results","is_final":false,"channel":{"alternatives":[]}}` + "\n" + `{"type":"Metadata","request_id":"x"}` + "\n" + `{"type":"Error","description":"\u0000bad","variant":"\u202e"}`))
	f.Add([]byte(`{"type":"Results","start":1e308,"is_final":true,"channel":{"alternatives":[{"transcript":"a"}]}}` + "\n" + `{"type":"Results","start":-1,"is_final":true,"channel":{"alternatives":[{"transcript":""}]}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		l := &listening{ctx: ctx, cancel: cancel, final: make(chan struct{}), finishing: true}
		for line := range bytes.SplitSeq(data, []byte("\n")) {
			var m message
			if json.Unmarshal(line, &m) != nil {
				continue // read skips what is not one of the documented messages
			}
			l.onMessage(&m)
		}
		if !slices.IsSortedFunc(l.finals, func(a, b segment) int {
			switch {
			case a.start < b.start:
				return -1
			case a.start > b.start:
				return 1
			}
			return 0
		}) {
			t.Fatalf("finals out of order: %+v", l.finals)
		}
		var parts []string
		for _, s := range l.finals {
			if s.text == "" {
				t.Fatalf("an empty final was kept: %+v", l.finals)
			}
			parts = append(parts, s.text)
		}
		if got := l.transcript(false); got != strings.Join(parts, " ") {
			t.Fatalf("transcript %q", got)
		}
		if l.err != nil && strings.ContainsFunc(l.err.Error(), func(r rune) bool { return r < 0x20 || r == 0x7f || r > 0x7e }) {
			t.Fatalf("the provider's error reaches the logs unprintable: %q", l.err)
		}
	})
}
