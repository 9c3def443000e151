package sip_test

import (
	"context"
	"log/slog"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/emiago/diago/media"
	"github.com/emiago/sipgo"
	sipmsg "github.com/emiago/sipgo/sip"
	"go.uber.org/goleak"

	"github.com/convengine/engine"
	"github.com/convengine/engine/internal/testkit"
	"github.com/convengine/engine/telephony"
	"github.com/convengine/engine/telephony/sip"
)

var quietLog = slog.New(slog.DiscardHandler)

// sipHarness is the demo engine answering bankNumber over SIP on loopback.
type sipHarness struct {
	*testkit.Phone
	srv *sip.Server
}

// newSIP serves the demo tenant's number over SIP; extra is its telephony section's other
// fields.
func newSIP(t testing.TB, cfg engine.Config, opts telephony.Options, extra string) *sipHarness {
	t.Helper()
	h := &sipHarness{Phone: testkit.NewPhone(t, cfg, opts, extra)}
	srv, err := sip.New(h.Demo.Engine, &sip.Options{Addr: "127.0.0.1:0", Directory: h.Directory, Phone: h.Phone.Phone,
		RTPPorts: sip.PortRange{First: 40000, Last: 40999}})
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	h.srv = srv
	return h
}

// dial calls the bank from the demo's caller.
func (h *sipHarness) dial(t testing.TB, p *phoneUA) *phoneCall {
	t.Helper()
	c, err := p.call(t, h.srv.Addr(), testkit.PhoneBank, testkit.PhoneCaller)
	if err != nil {
		t.Fatalf("the call was refused: %v", err)
	}
	return c
}

func (h *sipHarness) figures(t testing.TB) *telephony.Figures {
	t.Helper()
	select {
	case f := <-h.Figures:
		return f
	case <-time.After(15 * time.Second):
		t.Fatalf("the call's figures did not come\n%s", h.Demo.Logs.String())
		return nil
	}
}

// TestSIPCall is a SIP call of espeak-ng's speech heard by pocketsphinx, diago the caller:
// the greeting and disclosure heard, the PIN typed as RFC 4733 events while it plays, the
// balance asked by voice and answered, an answer spoken over and stopped, then the caller's
// BYE. The PIN reaches the bank and nothing else, and the call's RTP figures come from RTCP.
func TestSIPCall(t *testing.T) {
	h := newSIP(t, engine.Config{}, telephony.Options{EndOfSpeech: 500 * time.Millisecond}, "")
	// Phrases the recogniser hears through the line's 8 kHz (docs/benchmarks.md#phone).
	balance, help := testkit.Say(t, "What is my balance?"), testkit.Say(t, "What can you do?")
	c := h.dial(t, newPhoneUA(t))

	c.waitPlaying(10 * time.Second)
	typed := time.Now()
	c.keys(testkit.PhonePIN + "#")
	c.waitAnswer(typed, 700*time.Millisecond, 30*time.Second)
	if s := c.heardSeconds(); s < 5 {
		t.Fatalf("the caller heard %.1f s: no greeting, disclosure and welcome", s)
	}

	before := c.heardSeconds()
	c.say(balance)
	c.waitAnswer(time.Time{}, 700*time.Millisecond, 20*time.Second)
	if c.heardSeconds()-before < 1.5 {
		t.Fatalf("no answer heard to the balance (%.1f s)\n%s", c.heardSeconds()-before, h.Demo.Logs.String())
	}
	if seen := h.Spy.String(); !strings.Contains(seen, "Input:what is my balance") || !strings.Contains(seen, "1,234.56") {
		t.Fatalf("the record holds no answered balance turn:\n%s", seen)
	}

	// Spoken over, the answer stops within a few packets of the engine hearing it.
	c.say(help)
	c.waitPlaying(15 * time.Second)
	time.Sleep(300 * time.Millisecond)
	c.say(balance)
	c.waitAnswer(time.Time{}, 700*time.Millisecond, 20*time.Second)

	c.hangUp()
	f := h.figures(t)
	if !f.Verified || f.Turns < 3 || f.BargeIns < 1 || len(f.FirstAudio) < 2 {
		t.Errorf("figures %+v", f)
	}
	if m := f.Media; m == nil || m.Received < 500 || m.Sent < 500 || m.Reports == 0 || m.ReceivedLost != 0 {
		t.Errorf("RTP figures %+v", m)
	} else {
		t.Logf("RTP: received %d (lost %d), sent %d (the caller reported %d lost, jitter %v, %d reports)",
			m.Received, m.ReceivedLost, m.Sent, m.SentLost, m.SentJitter, m.Reports)
	}
	t.Logf("first audio p50 %v, max %v; jitter %v", telephony.Percentile(f.FirstAudio, 50),
		telephony.Percentile(f.FirstAudio, 100), f.Jitter)
	h.PINNowhere(t, "what is my balance")
	if logs := h.Demo.Logs.String(); !strings.Contains(logs, `"msg":"sip call"`) || !strings.Contains(logs, `"codec":"pcmu"`) {
		t.Errorf("the call was not logged with its codec:\n%s", logs)
	}
}

// TestSIPTransfer: a caller who asks for a person is referred to the tenant's number (REFER);
// the caller's phone calls the person, the NOTIFY tells the engine it worked, and the engine
// ends its leg with a BYE. (The recogniser is scripted: through the line's 8 kHz,
// pocketsphinx's wideband model does not hear the request reliably.)
func TestSIPTransfer(t *testing.T) {
	h := newSIP(t, testkit.FakeSpeech("I want to talk to a person"), telephony.Options{EndOfSpeech: 300 * time.Millisecond}, "")
	p := newPhoneUA(t)
	c := h.dial(t, p)
	typed := time.Now()
	c.keys(testkit.PhonePIN + "#")
	c.waitAnswer(typed, 300*time.Millisecond, 10*time.Second)
	c.say(testkit.Voiced(16000))
	select {
	case user := <-p.persons:
		if user != testkit.PhonePerson {
			t.Errorf("the person's line was called for %q", user)
		}
	case <-time.After(15 * time.Second):
		t.Fatalf("the caller was not referred to the person\n%s", h.Demo.Logs.String())
	}
	c.waitEnded(10 * time.Second)
	if f := h.figures(t); !f.Verified {
		t.Errorf("figures %+v", f)
	}
	if !strings.Contains(h.Demo.Logs.String(), "phone call transferred") {
		t.Errorf("the transfer was not logged as done:\n%s", h.Demo.Logs.String())
	}
}

// TestSIPShutdown: keys as SIP INFO (application/dtmf-relay) verify the caller; while the
// engine drains, the call goes on and is answered until the drain's deadline less the time a
// goodbye takes; then the caller hears a goodbye, then the engine's BYE.
func TestSIPShutdown(t *testing.T) {
	h := newSIP(t, testkit.FakeSpeech("what is my balance"), telephony.Options{}, "")
	c := h.dial(t, newPhoneUA(t))
	typed := time.Now()
	for _, k := range testkit.PhonePIN + "#" {
		c.info(t, "Signal="+string(k)+"\r\nDuration=160\r\n")
	}
	c.waitAnswer(typed, 300*time.Millisecond, 10*time.Second) // the thanks after the PIN
	// The engine drains with 20 s to go: the call goes on for 5 s (20 s less the time a
	// goodbye takes), and a question asked meanwhile is answered.
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	shut := make(chan error, 1)
	started := time.Now()
	go func() { shut <- h.Demo.Engine.Shutdown(ctx) }()
	time.Sleep(200 * time.Millisecond)
	asked := time.Now()
	c.say(testkit.Voiced(16000))
	c.waitAnswer(asked, 300*time.Millisecond, 4*time.Second)
	before := c.heardSeconds()
	if err := <-shut; err != nil {
		t.Fatal(err)
	}
	c.waitEnded(5 * time.Second)
	if took := time.Since(started); took < 4*time.Second {
		t.Errorf("the call was told goodbye %v into a drain of 20 s", took)
	}
	if c.heardSeconds() <= before {
		t.Error("no goodbye was heard before the BYE")
	}
	if f := h.figures(t); !f.Verified {
		t.Errorf("the INFO keys did not verify the caller: %+v", f)
	}
	h.PINNowhere(t, "")
}

// info sends a SIP INFO of application/dtmf-relay in the call's dialog.
func (c *phoneCall) info(t testing.TB, body string) {
	t.Helper()
	req := sipmsg.NewRequest(sipmsg.INFO, c.d.RemoteContact().Address)
	req.AppendHeader(sipmsg.NewHeader("Content-Type", "application/dtmf-relay"))
	req.SetBody([]byte(body))
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	res, err := c.d.Do(ctx, req)
	if err != nil || res.StatusCode != sipmsg.StatusOK {
		t.Fatalf("INFO: %v %v", res, err)
	}
}

// TestSIPRefusals: an unknown number, a caller from outside the tenant's trunks, an offer
// without G.711, malformed SDP and calls past the bounds are refused with their SIP statuses;
// nothing panics and nothing is left running.
func TestSIPRefusals(t *testing.T) {
	ignore := goleak.IgnoreCurrent()
	t.Cleanup(func() {
		goleak.VerifyNone(t, ignore)
	})
	h := newSIP(t, testkit.FakeSpeech("what is my balance"),
		telephony.Options{Calls: telephony.NewCalls(4, 0, 1)}, "")
	p := newPhoneUA(t)

	status := func(name string, err error, want ...int) {
		t.Helper()
		got := refusal(err)
		for _, w := range want {
			if got == w {
				return
			}
		}
		t.Errorf("%s: refused with %d (%v), want %v", name, got, err, want)
	}
	_, err := p.call(t, h.srv.Addr(), "+15555550999", testkit.PhoneCaller)
	status("an unknown number", err, 404, 480)
	_, err = p.call(t, h.srv.Addr(), "pk_demo", testkit.PhoneCaller)
	status("a name, not a number", err, 404, 480)
	_, err = newPhoneUA(t, media.CodecAudioOpus).call(t, h.srv.Addr(), testkit.PhoneBank, testkit.PhoneCaller)
	status("an offer without G.711", err, 488)

	for name, body := range map[string]string{
		"a c= line of one field": "v=0\r\no=- 1 1 IN IP4 127.0.0.1\r\ns=-\r\nc=IN\r\nt=0 0\r\nm=audio 4000 RTP/AVP 0\r\n",
		"an rtpmap given twice": "v=0\r\no=- 1 1 IN IP4 127.0.0.1\r\ns=-\r\nc=IN IP4 127.0.0.1\r\nt=0 0\r\nm=audio 4000 RTP/AVP 96\r\n" +
			"a=rtpmap:96 PCMU/8000\r\na=rtpmap:96 PCMU/8000\r\n",
		"not SDP": "hello",
	} {
		if got := rawInvite(t, p, h.srv.Addr(), body, true); got != 400 {
			t.Errorf("%s: %d, want 400", name, got)
		}
	}
	if got := rawInvite(t, p, h.srv.Addr(), "v=0\r\n", false); got != 400 {
		t.Errorf("an INVITE without Contact: %d, want 400", got)
	}

	// A calling number holds one call: its second is busy.
	first := h.dial(t, p)
	_, err = p.call(t, h.srv.Addr(), testkit.PhoneBank, testkit.PhoneCaller)
	status("a second call of one number", err, 486)
	first.hangUp()
	h.figures(t)

	// A tenant whose trunks are elsewhere refuses loopback.
	other := newSIP(t, testkit.FakeSpeech("x"), telephony.Options{}, `"sip":{"trunks":["192.0.2.0/24"]}`)
	_, err = p.call(t, other.srv.Addr(), testkit.PhoneBank, testkit.PhoneCaller)
	status("a caller outside the trunks", err, 403)
	if strings.Contains(h.Demo.Logs.String(), "panicked") {
		t.Errorf("a handler panicked:\n%s", h.Demo.Logs.String())
	}
}

// TestSIPCallBounds: past the process's bound or the tenant's, a call is refused 503.
func TestSIPCallBounds(t *testing.T) {
	for name, calls := range map[string]*telephony.Calls{"process": telephony.NewCalls(1, 0, 0), "tenant": telephony.NewCalls(0, 1, 0)} {
		t.Run(name, func(t *testing.T) {
			h := newSIP(t, testkit.FakeSpeech("what is my balance"), telephony.Options{Calls: calls}, "")
			p := newPhoneUA(t)
			first := h.dial(t, p)
			_, err := p.call(t, h.srv.Addr(), testkit.PhoneBank, "+15555550124")
			if got := refusal(err); got != 503 {
				t.Errorf("a call past the %s's bound: %d (%v)", name, got, err)
			}
			first.hangUp()
		})
	}
}

// rawInvite sends an INVITE with body as its SDP, with a Contact or not, and returns the final
// status.
func rawInvite(t testing.TB, p *phoneUA, addr, body string, contact bool) int {
	t.Helper()
	host, port, _ := net.SplitHostPort(addr)
	n, _ := strconv.Atoi(port)
	cli, err := sipgo.NewClient(p.ua, sipgo.WithClientHostname("127.0.0.1"))
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	req := sipmsg.NewRequest(sipmsg.INVITE, sipmsg.Uri{User: testkit.PhoneBank, Host: host, Port: n})
	if contact {
		req.AppendHeader(&sipmsg.ContactHeader{Address: sipmsg.Uri{User: "caller", Host: "127.0.0.1", Port: p.port}})
	}
	req.AppendHeader(sipmsg.NewHeader("Content-Type", "application/sdp"))
	req.SetBody([]byte(body))
	req.SetTransport("UDP")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	res, err := cli.Do(ctx, req)
	if err != nil {
		t.Fatalf("INVITE: %v", err)
	}
	return res.StatusCode
}
