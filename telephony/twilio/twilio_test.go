package twilio_test

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/convengine/engine"
	"github.com/convengine/engine/enginetest"
	"github.com/convengine/engine/internal/testkit"
	"github.com/convengine/engine/telephony"
	"github.com/convengine/engine/telephony/twilio"
)

const (
	authToken  = "twilio-auth-token-0123456789abcdef"
	bankNumber = testkit.PhoneBank
	person     = testkit.PhonePerson
	caller     = testkit.PhoneCaller
	pin        = testkit.PhonePIN
)

// phoneHarness is the demo engine answering calls to bankNumber through the Twilio transport,
// with a stand-in for Twilio's REST API, and spies on what the PIN must never reach.
type phoneHarness struct {
	*testkit.Phone
	demo    *enginetest.Demo
	url     string
	rest    *twilioREST
	spy     *testkit.PhoneSpy
	figures chan *telephony.Figures
}

// newPhone serves the demo tenant on bankNumber; cfg's speech is kept when set, else espeak-ng
// and pocketsphinx.
func newPhone(t testing.TB, cfg engine.Config, phoneOpts telephony.Options) *phoneHarness {
	t.Helper()
	p := testkit.NewPhone(t, cfg, phoneOpts, `"twilio":{"account_sid":"`+accountSid+`","auth_token_env":"DEMO_TWILIO_AUTH_TOKEN"}`)
	h := &phoneHarness{Phone: p, demo: p.Demo, spy: p.Spy, figures: p.Figures}
	h.rest = newTwilioREST(t, authToken)
	var handler http.Handler
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { handler.ServeHTTP(w, r) }))
	t.Cleanup(srv.Close)
	h.url = srv.URL
	tw, err := twilio.New(h.demo.Engine, &twilio.Options{PublicURL: srv.URL, Directory: p.Directory, Phone: p.Phone,
		Secret: func(name string) string {
			if name == "DEMO_TWILIO_AUTH_TOKEN" {
				return authToken
			}
			return ""
		},
		APIBaseURL: h.rest.URL, Key: bytes.Repeat([]byte{7}, 32)})
	if err != nil {
		t.Fatal(err)
	}
	handler = h.demo.Engine.Handler(tw.Routes()...)
	return h
}

// call places a call from from and opens its stream.
func (h *phoneHarness) call(t testing.TB, sid, from string) *fakeCall {
	t.Helper()
	streamURL, token := answer(t, webhook(t, h.url, authToken, sid, from, bankNumber))
	ws, resp, err := dialStream(t, streamURL, authToken)
	if err != nil {
		t.Fatalf("stream: %v (%v)", err, resp)
	}
	return startCall(t, ws, sid, token)
}

func sid(n int) string { return fmt.Sprintf("CA%032x", n) }

// TestTwilioCall is a call of espeak-ng's speech heard by pocketsphinx: the PIN typed while the
// greeting plays, the balance asked by voice and answered, an answer spoken over (clear). The
// PIN reaches the bank and nothing else.
func TestTwilioCall(t *testing.T) {
	h := newPhone(t, engine.Config{}, telephony.Options{EndOfSpeech: 500 * time.Millisecond})
	// Phrases the recogniser hears through the line's 8 kHz (docs/benchmarks.md#phone).
	balance, help := testkit.Say(t, "What is my balance?"), testkit.Say(t, "What can you do?")
	c := h.call(t, sid(1), caller)

	// The greeting starts at once; the PIN is typed while it plays.
	c.waitPlaying(10 * time.Second)
	typed := time.Now()
	c.keys(pin + "#")
	c.waitAnswer(typed, 500*time.Millisecond, 30*time.Second)
	if s := c.heardSeconds(); s < 5 {
		t.Fatalf("the caller heard %.1f s: no greeting, disclosure and welcome", s)
	}

	before := c.heardSeconds()
	c.say(balance)
	c.waitAnswer(time.Time{}, 500*time.Millisecond, 20*time.Second)
	if c.heardSeconds()-before < 1.5 {
		t.Fatalf("no answer heard to the balance (%.1f s)\n%s", c.heardSeconds()-before, h.demo.Logs.String())
	}
	if seen := h.spy.String(); !strings.Contains(seen, "Input:what is my balance") || !strings.Contains(seen, "1,234.56") {
		t.Fatalf("the record holds no answered balance turn:\n%s", seen)
	}

	// Spoken over, the answer stops and the line is cleared.
	c.say(help)
	c.waitPlaying(15 * time.Second)
	time.Sleep(300 * time.Millisecond)
	c.say(balance)
	deadline := time.Now().Add(5 * time.Second)
	for {
		c.mu.Lock()
		clears := c.clears
		c.mu.Unlock()
		if clears > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("speaking over the answer sent no clear")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if !c.answered(time.Time{}, 500*time.Millisecond, 20*time.Second) {
		t.Fatalf("no answer to the balance asked over an answer; the engine logged:\n%s", h.demo.Logs.String())
	}

	c.hangUp()
	var f *telephony.Figures
	select {
	case f = <-h.figures:
	case <-time.After(10 * time.Second):
		t.Fatal("the call's figures did not come")
	}
	if !f.Verified || f.Turns < 3 || f.BargeIns < 1 || len(f.FirstAudio) < 2 || len(f.MarkDelays) == 0 {
		t.Errorf("figures %+v", f)
	}
	t.Logf("first audio p50 %v, max %v; mark delay p50 %v; jitter %v", telephony.Percentile(f.FirstAudio, 50),
		telephony.Percentile(f.FirstAudio, 100), telephony.Percentile(f.MarkDelays, 50), f.Jitter)

	// The PIN went to the bank, and nowhere else.
	h.PINNowhere(t, "what is my balance")
	if !strings.Contains(h.demo.Logs.String(), `"msg":"phone call"`) {
		t.Error("the call was not logged")
	}
}

// TestTwilioTransfer: a caller who asks for a person is handed to the tenant's number with
// <Dial> through the REST API, once the line that says so was heard. (The recogniser is
// scripted: through the line's 8 kHz, pocketsphinx's wideband model does not hear the request
// reliably, docs/benchmarks.md#phone.)
func TestTwilioTransfer(t *testing.T) {
	h := newPhone(t, testkit.FakeSpeech("I want to talk to a person"), telephony.Options{EndOfSpeech: 300 * time.Millisecond})
	c := h.call(t, sid(5), caller)
	typed := time.Now()
	c.keys(pin + "#")
	c.waitAnswer(typed, 300*time.Millisecond, 10*time.Second)
	c.say(testkit.Voiced(16000))
	update := h.rest.wait(t, 10*time.Second)
	if twiml := update.Get("Twiml"); !strings.Contains(twiml, "<Dial>"+person+"</Dial>") {
		t.Fatalf("the call was updated with %v\n%s", update, h.demo.Logs.String())
	}
	c.mu.Lock()
	marks := c.marks
	c.mu.Unlock()
	if marks == 0 {
		t.Error("the call was handed over before the caller heard why")
	}
}

// TestTwilioRefusals: a webhook or an upgrade with a bad signature, a stream nobody set up and
// a stream token used twice are refused.
func TestTwilioRefusals(t *testing.T) {
	h := newPhone(t, testkit.FakeSpeech("what is my balance"), telephony.Options{})

	if resp := webhook(t, h.url, "not-the-auth-token", sid(2), caller, bankNumber); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("a webhook with a bad signature: %d", resp.StatusCode)
	}
	streamURL, token := answer(t, webhook(t, h.url, authToken, sid(3), caller, bankNumber))
	if _, resp, err := dialStream(t, streamURL, "not-the-auth-token"); err == nil || resp == nil || resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("an upgrade with a bad signature: %v %v", err, resp)
	}

	refused := func(name, sid, token string) {
		t.Helper()
		ws, _, err := dialStream(t, streamURL, authToken)
		if err != nil {
			t.Fatal(err)
		}
		c := startCall(t, ws, sid, token)
		deadline := time.Now().Add(5 * time.Second)
		for time.Now().Before(deadline) {
			c.mu.Lock()
			closed := c.closed
			c.mu.Unlock()
			if closed != nil {
				if websocket.CloseStatus(closed) != websocket.StatusPolicyViolation {
					t.Errorf("%s: closed with %v", name, closed)
				}
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
		t.Errorf("%s: the stream was not refused", name)
	}
	refused("a stream nobody set up", sid(4), "made.up")
	refused("another call's token", sid(4), token)

	c := startCall(t, mustDial(t, streamURL), sid(3), token)
	c.waitPlaying(10 * time.Second) // the call is answered
	c.hangUp()
	refused("a replayed token", sid(3), token)
}

func mustDial(t testing.TB, streamURL string) *websocket.Conn {
	ws, _, err := dialStream(t, streamURL, authToken)
	if err != nil {
		t.Fatal(err)
	}
	return ws
}
