package agui_test

import (
	"strings"
	"testing"
)

// FuzzRunAgentInput posts arbitrary bodies: each is answered with a problem or a well-formed
// run, never a panic or a transfer without a resolved resume.
func FuzzRunAgentInput(f *testing.F) {
	for _, seed := range []string{
		input("t", "r", "What's my balance?"),
		input("t", "r", "send 20 dollars to Alex"),
		`{"threadId":"t","runId":"r","messages":[{"id":"1","role":"user","content":[{"type":"text","text":"hi"},{"type":"image"}]}]}`,
		resumeInput("t", "r", fakeID(), "resolved", basicAuth()),
		resumeInput("t", "r", fakeID(), "cancelled", ""),
		resumeInput("t", "r", "confirm.e30", "resolved", `{"auth":{"method":"faceid","verifiedAt":1e300}}`),
		`{"threadId":"t","runId":"r","messages":null,"resume":[]}`,
		`{"threadId":1}`, `null`, ``, `{`,
	} {
		f.Add(seed)
	}
	fx := newFixture(f)
	f.Fuzz(func(t *testing.T, body string) {
		r := fx.run(t, nil, body)
		switch {
		case r.contentType == "text/event-stream":
			checkSequence(t, r)
		case r.status < 400 || r.status >= 500 || r.problem["code"] == nil:
			t.Fatalf("%d %v", r.status, r.problem)
		}
		if strings.Contains(body, `"resolved"`) {
			return
		}
		if n := fx.demo.Bank.Transfers(userToken); n != 0 {
			t.Fatalf("%d transfers without a resolved resume", n)
		}
	})
}
