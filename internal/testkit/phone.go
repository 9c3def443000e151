package testkit

import (
	"context"
	"fmt"
	"iter"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/convengine/engine"
	"github.com/convengine/engine/enginetest"
	"github.com/convengine/engine/examples/demobank"
	"github.com/convengine/engine/handoff"
	"github.com/convengine/engine/httptools"
	"github.com/convengine/engine/intent"
	"github.com/convengine/engine/telephony"
	"github.com/convengine/engine/toolsets"
)

// The phone line of the phone transports' tests: the bank's number, the person a caller is put
// through to, and the one caller the bank knows, with its PIN.
const (
	PhoneBank   = "+15555550100"
	PhonePerson = "+15555550199"
	PhoneCaller = "+15555550123"
	PhonePIN    = "246810"
)

// A Phone is the demo engine answering PhoneBank, whose backend verifies PhoneCaller by
// PhonePIN, with a switchboard for transfers and a spy on where the PIN must never go. The
// transport under test serves Phone and Directory.
type Phone struct {
	Demo      *enginetest.Demo
	Spy       *PhoneSpy
	Phone     *telephony.Phone
	Directory *telephony.Directory
	// Figures gets each call's figures when it ends (up to 64 not yet read).
	Figures chan *telephony.Figures
}

// NewPhone serves the demo tenant on PhoneBank, its telephony section's other fields
// (`"twilio":{…}`, `"sip":{…}`) in extra; cfg's speech is kept when set, else espeak-ng and
// pocketsphinx.
func NewPhone(t testing.TB, cfg engine.Config, opts telephony.Options, extra string) *Phone {
	t.Helper()
	h := &Phone{Spy: &PhoneSpy{}, Figures: make(chan *telephony.Figures, 64)}
	// The switchboard reads the demo's tenant, made with the engine below.
	var tenants engine.TenantStore
	sb, err := handoff.New(&handoff.Options{Desk: handoff.Desk{}, Default: &handoff.Config{Desk: true},
		Tenants: tenantsFunc(func(ctx context.Context, key string) (*engine.Tenant, error) { return tenants.Tenant(ctx, key) })})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sb.Close() })
	if cfg.Synthesizer == nil {
		cfg = WithSpeech(t, cfg)
	}
	cfg.Model, cfg.Recorder, cfg.Observer = h.Spy, h.Spy, h.Spy.observer()
	cfg.Guards = sb.Guards(nil)
	cfg.Toolset = toolsets.Combine(httptools.New(nil), sb.Toolset())
	if extra != "" {
		extra = "," + extra
	}
	h.Demo = enginetest.NewDemo(t, &enginetest.DemoOptions{Config: cfg,
		Bank: &demobank.Options{Phones: []demobank.Phone{{Number: PhoneCaller, PIN: PhonePIN, Token: "phone-user-token-s3cr3t"}}},
		Tenant: func(tn *engine.Tenant) {
			tn.Telephony = []byte(`{"numbers":["` + PhoneBank + `"],"transfer_to":"` + PhonePerson + `","pin":{"timeout":"2s"}` + extra + `}`)
		}})
	if tenants, err = engine.NewStaticTenants(h.Demo.Tenant); err != nil {
		t.Fatal(err)
	}
	if err := sb.Bind(h.Demo.Engine); err != nil {
		t.Fatal(err)
	}
	if h.Directory, err = telephony.NewDirectory(h.Demo.Tenant); err != nil {
		t.Fatal(err)
	}
	opts.Transferred = func(ctx context.Context, tenant, id string) { sb.End(ctx, id) }
	opts.Figures = func(_ string, f *telephony.Figures) {
		select {
		case h.Figures <- f:
		default: // a benchmark's hundreds of calls: the figures nobody waits for are dropped
		}
	}
	h.Phone = telephony.New(h.Demo.Engine, &opts)
	return h
}

// PINNowhere fails t when the PIN is in the engine's logs, a model request, an observer event
// or a recorded turn or action; the spy must have seen the call's turns.
func (h *Phone) PINNowhere(t testing.TB, said string) {
	t.Helper()
	if !strings.Contains(h.Spy.String(), said) {
		t.Fatalf("the spy saw no %q", said)
	}
	for where, text := range map[string]string{"logs": h.Demo.Logs.String(), "model requests, traces and the record": h.Spy.String()} {
		if strings.Contains(text, PhonePIN) {
			t.Errorf("the PIN appears in the %s", where)
		}
	}
}

// ReportCallsHeld measures the CPU the process spends over d with n calls held, and reports it
// per call (millicores/call) and as the calls two cores would hold at that rate (calls/2cores).
func ReportCallsHeld(b *testing.B, n int, d time.Duration) {
	before, start := cpuTime(), time.Now()
	time.Sleep(d)
	used, wall := cpuTime()-before, time.Since(start)
	perCall := used.Seconds() / wall.Seconds() / float64(n) // cores per call
	b.ReportMetric(perCall*1000, "millicores/call")
	b.ReportMetric(2/perCall, "calls/2cores")
}

// DialAll runs dial(0) to dial(n-1) at once, and returns the calls they made.
func DialAll[C any](n int, dial func(i int) C) []C {
	calls := make([]C, n)
	var wg sync.WaitGroup
	for i := range calls {
		wg.Go(func() { calls[i] = dial(i) })
	}
	wg.Wait()
	return calls
}

// Poll calls done every 10 ms until it reports true, and fails t with what after limit.
func Poll(t testing.TB, limit time.Duration, what string, done func() bool) {
	t.Helper()
	for deadline := time.Now().Add(limit); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if done() {
			return
		}
	}
	t.Fatal(what)
}

// cpuTime is the process's CPU time so far, user and system.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// FakeSpeech is a synthesizer of tones and a recogniser that hears heard, without programs.
func FakeSpeech(heard string) engine.Config {
	return engine.Config{Synthesizer: &FakeSynthesizer{Rate: 8000, Seconds: 0.2},
		Transcriber: TranscriberFunc(func(context.Context, []int16, int, string) (string, error) { return heard, nil })}
}

type tenantsFunc func(ctx context.Context, key string) (*engine.Tenant, error)

func (f tenantsFunc) Tenant(ctx context.Context, key string) (*engine.Tenant, error) {
	return f(ctx, key)
}

// PhoneSpy keeps, as text, every model request, observer event and recorded turn or action;
// as a Model it answers with the intent model.
type PhoneSpy struct {
	mu   sync.Mutex
	seen strings.Builder
}

func (s *PhoneSpy) keep(v any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	fmt.Fprintf(&s.seen, "%+v\n", v)
}

// String is all the spy saw.
func (s *PhoneSpy) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.seen.String()
}

var phoneModel = intent.New(nil)

// Stream keeps the request and answers with the intent model.
func (s *PhoneSpy) Stream(ctx context.Context, req *engine.ModelRequest) iter.Seq2[engine.ModelEvent, error] {
	s.keep(*req)
	return phoneModel.Stream(ctx, req)
}

// Turn keeps a recorded turn.
func (s *PhoneSpy) Turn(_ context.Context, r *engine.RecordedTurn) { s.keep(*r) }

// Action keeps a recorded action and its outcome.
func (s *PhoneSpy) Action(_ context.Context, r *engine.RecordedAction) (func(context.Context, *engine.ActionOutcome), error) {
	s.keep(*r)
	return func(_ context.Context, o *engine.ActionOutcome) { s.keep(*o) }, nil
}

func (s *PhoneSpy) observer() *engine.Observer {
	return &engine.Observer{
		TurnStart: func(ctx context.Context, e engine.TurnEvent) context.Context { s.keep(e); return ctx },
		TurnEnd:   func(_ context.Context, e engine.TurnEvent) { s.keep(e) },
		ToolStart: func(ctx context.Context, e engine.ToolEvent) context.Context { s.keep(e); return ctx },
		ToolEnd:   func(_ context.Context, e engine.ToolEvent) { s.keep(e) },
		Speech:    func(_ context.Context, e engine.SpeechEvent) { s.keep(e) },
		ModelCall: func(_ context.Context, e engine.ModelCallEvent) { s.keep(e) },
		Request:   func(_ context.Context, e engine.RequestEvent) { s.keep(e) },
	}
}
