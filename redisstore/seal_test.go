package redisstore_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/convengine/engine"
	"github.com/convengine/engine/enginetest"
	"github.com/convengine/engine/examples/demobank"
	"github.com/convengine/engine/httptools"
	"github.com/convengine/engine/intent"
	"github.com/convengine/engine/redisstore"
	"github.com/convengine/engine/widgets"
)

var (
	sealKey      = bytes.Repeat([]byte{7}, 32)
	otherSealKey = bytes.Repeat([]byte{8}, 32)
)

// TestSealedSuite runs the store's conformance checks, turn log included, with sealing on.
func TestSealedSuite(t *testing.T) {
	for name, client := range backends(t) {
		t.Run(name, func(t *testing.T) {
			opts := func(t *testing.T) *redisstore.Options {
				return &redisstore.Options{Prefix: prefix(t), Timeout: generous, SealKey: sealKey}
			}
			enginetest.StoreSuite{New: func(t *testing.T) enginetest.Store {
				return redisstore.New(client(t), opts(t))
			}, TurnLog: func(t *testing.T) engine.TurnLog {
				return redisstore.New(client(t), opts(t))
			}}.Run(t)
		})
	}
}

// rawValues returns every value Redis holds under prefix p, as text: strings, hashes and
// streams, whatever their layout.
func rawValues(t *testing.T, c redis.UniversalClient, p string) string {
	t.Helper()
	ctx := t.Context()
	var out strings.Builder
	keys, err := c.Keys(ctx, p+"*").Result()
	if err != nil {
		t.Fatal(err)
	}
	if len(keys) == 0 {
		t.Fatalf("no keys under %s", p)
	}
	for _, k := range keys {
		switch typ := c.Type(ctx, k).Val(); typ {
		case "string":
			out.WriteString(c.Get(ctx, k).Val())
		case "hash":
			for f, v := range c.HGetAll(ctx, k).Val() {
				out.WriteString(f + "=" + v + "\n")
			}
		case "stream":
			for _, m := range c.XRange(ctx, k, "-", "+").Val() {
				for f, v := range m.Values {
					out.WriteString(f + "=" + v.(string) + "\n")
				}
			}
		case "zset":
			for _, m := range c.ZRange(ctx, k, 0, -1).Val() {
				out.WriteString(m + "\n")
			}
		default:
			t.Fatalf("key %s of type %s", k, typ)
		}
		out.WriteString("\n")
	}
	return out.String()
}

const sentinel = "4111-SENTINEL-1111"

// TestSealedAtRest writes a turn's events and an action's reply that hold a sentinel: with a
// SealKey, no value in Redis holds it, and the store reads back what was written; without
// one, the values hold it as is.
func TestSealedAtRest(t *testing.T) {
	for name, newClient := range backends(t) {
		for _, sealed := range []bool{true, false} {
			t.Run(name+map[bool]string{true: "/sealed", false: "/plain"}[sealed], func(t *testing.T) {
				ctx := t.Context()
				c, p := newClient(t), prefix(t)
				opts := &redisstore.Options{Prefix: p, Timeout: generous}
				if sealed {
					opts.SealKey = sealKey
				}
				s := redisstore.New(c, opts)
				owner := &engine.TurnOwner{Tenant: "pk_demo", User: "u1", Session: "s1"}
				evs := []engine.LoggedEvent{
					{ID: 1, Name: "start", Data: []byte(`{"turnId":"t1"}`)},
					{ID: 2, Name: "speak", Data: []byte(`{"delta":"card ` + sentinel + `"}`)},
					{ID: 3, Name: "done", Data: []byte(`{"speak":"` + sentinel + `","widgets":[]}`)},
				}
				keep := time.Now().Add(time.Minute)
				if err := s.AppendEvents(ctx, "t1", owner, evs, true, keep); err != nil {
					t.Fatal(err)
				}
				reply := []byte(`{"done":{"type":"success","title":"Paid","line1":"` + sentinel + `"}}`)
				if r, err := s.BeginAction(ctx, "pk_demo:a1", "o1", keep); r != nil || err != nil {
					t.Fatalf("BeginAction: %q %v", r, err)
				}
				if err := s.FinishAction(ctx, "pk_demo:a1", "o1", reply, keep); err != nil {
					t.Fatal(err)
				}

				raw := rawValues(t, c, p)
				if got := strings.Contains(raw, sentinel); got == sealed {
					t.Errorf("sealed %v, and Redis holds the sentinel: %v\n%s", sealed, got, raw)
				}

				rec, err := s.ReadEvents(ctx, "t1", 0, 10, 0)
				if err != nil {
					t.Fatal(err)
				}
				if rec.Owner != *owner || !rec.Done || len(rec.Events) != len(evs) {
					t.Fatalf("read back %+v", rec)
				}
				for i, ev := range rec.Events {
					if ev.ID != evs[i].ID || ev.Name != evs[i].Name || !bytes.Equal(ev.Data, evs[i].Data) {
						t.Errorf("event %d read back as %d %s %s", i, ev.ID, ev.Name, ev.Data)
					}
				}
				if r, err := s.BeginAction(ctx, "pk_demo:a1", "o2", keep); err != nil || !bytes.Equal(r, reply) {
					t.Errorf("the action's reply read back as %q %v", r, err)
				}
			})
		}
	}
}

// TestSealedRefusesWhatDoesNotOpen: a turn whose events do not open (another key, a flipped
// byte, an entry copied from another turn, an entry written before sealing was on, a sealed
// one read without a key) is not found, and an action whose record does not open is an error
// that never hands out a claim: the action does not run again.
func TestSealedRefusesWhatDoesNotOpen(t *testing.T) {
	for name, newClient := range backends(t) {
		t.Run(name, func(t *testing.T) {
			ctx := t.Context()
			c, p := newClient(t), prefix(t)
			store := func(key []byte) *redisstore.Store {
				return redisstore.New(c, &redisstore.Options{Prefix: p, Timeout: generous, SealKey: key})
			}
			sealed, other, plain := store(sealKey), store(otherSealKey), store(nil)
			owner := &engine.TurnOwner{Tenant: "pk_demo", User: "u1"}
			keep := time.Now().Add(time.Minute)
			write := func(s *redisstore.Store, turn, action string) {
				t.Helper()
				ev := []engine.LoggedEvent{{ID: 1, Name: "speak", Data: []byte(`{"delta":"` + sentinel + `"}`)}}
				if err := s.AppendEvents(ctx, turn, owner, ev, true, keep); err != nil {
					t.Fatal(err)
				}
				if _, err := s.BeginAction(ctx, "pk_demo:"+action, "o", keep); err != nil {
					t.Fatal(err)
				}
				if err := s.FinishAction(ctx, "pk_demo:"+action, "o", []byte(`{"ok":"`+sentinel+`"}`), keep); err != nil {
					t.Fatal(err)
				}
			}
			write(sealed, "sealed", "sealed")
			write(plain, "plain", "plain")

			// A flipped byte in the sealed data of the event and of the reply.
			write(sealed, "flipped", "flipped")
			stream := p + "turn:{flipped}"
			m := c.XRange(ctx, stream, "-", "+").Val()[0]
			s, ok := m.Values["s"].(string)
			if !ok {
				t.Fatalf("no sealed data in the entry %v", m.Values)
			}
			data := []byte(s)
			data[len(data)/2] ^= 1
			m.Values["s"] = string(data)
			if err := c.Del(ctx, stream).Err(); err != nil {
				t.Fatal(err)
			}
			if err := c.XAdd(ctx, &redis.XAddArgs{Stream: stream, ID: m.ID, Values: m.Values}).Err(); err != nil {
				t.Fatal(err)
			}
			akey := p + "action:pk_demo:{flipped}"
			var rec map[string]any
			if err := json.Unmarshal([]byte(c.Get(ctx, akey).Val()), &rec); err != nil {
				t.Fatal(err)
			}
			s64, _ := rec["sealed"].(string)
			b, err := base64.StdEncoding.DecodeString(s64)
			if err != nil || len(b) == 0 {
				t.Fatalf("no sealed result in the action record %v", rec)
			}
			b[len(b)/2] ^= 1
			rec["sealed"] = base64.StdEncoding.EncodeToString(b)
			flipped, _ := json.Marshal(rec)
			if err := c.Set(ctx, akey, flipped, time.Minute).Err(); err != nil {
				t.Fatal(err)
			}

			// The sealed turn and action, copied to another turn's and action's keys.
			for _, k := range []string{"turn:{", "turnmeta:{", "action:pk_demo:{"} {
				dump := c.Dump(ctx, p+k+"sealed}").Val()
				if err := c.Restore(ctx, p+k+"copied}", 0, dump).Err(); err != nil {
					t.Fatal(err)
				}
			}

			for _, tc := range []struct {
				name   string
				store  *redisstore.Store
				turn   string
				action string
			}{
				{"another key", other, "sealed", "sealed"},
				{"a flipped byte", sealed, "flipped", "flipped"},
				{"copied to another key", sealed, "copied", "copied"},
				{"written before sealing", sealed, "plain", "plain"},
				{"sealed, read without a key", plain, "sealed", "sealed"},
			} {
				t.Run(tc.name, func(t *testing.T) {
					if rec, err := tc.store.ReadEvents(ctx, tc.turn, 0, 10, 0); !errors.Is(err, engine.ErrTurnNotFound) {
						t.Errorf("ReadEvents: %+v, %v; want ErrTurnNotFound", rec, err)
					}
					// As a resume follows a turn: waiting for the events after the first.
					if rec, err := tc.store.ReadEvents(ctx, tc.turn, 0, 10, time.Second); !errors.Is(err, engine.ErrTurnNotFound) {
						t.Errorf("ReadEvents waiting: %+v, %v; want ErrTurnNotFound", rec, err)
					}
					for range 2 { // refused again: the failed read claimed nothing
						r, err := tc.store.BeginAction(ctx, "pk_demo:"+tc.action, "o2", keep)
						if err == nil || !errors.Is(err, redisstore.ErrUnreadable) || !errors.Is(err, engine.ErrStoreUnavailable) {
							t.Fatalf("BeginAction: %q, %v; want an error wrapping ErrUnreadable", r, err)
						}
						if strings.Contains(err.Error(), sentinel) || strings.Contains(err.Error(), "SENTINEL") {
							t.Errorf("the error tells the content: %v", err)
						}
					}
				})
			}
			// What was refused is still there for the key that sealed it.
			if r, err := sealed.BeginAction(ctx, "pk_demo:sealed", "o2", keep); err != nil || !strings.Contains(string(r), sentinel) {
				t.Errorf("the sealed action: %q %v", r, err)
			}
		})
	}
}

// TestReplicasSealed runs a transfer on two replicas that seal what they keep in Redis under
// their signing key: the turn resumes and the execute replays on the other replica as without
// sealing, Redis holds neither the payee nor the amount, and a replica with another key
// answers the resume 404 and the replay 503, moving no money again.
func TestReplicasSealed(t *testing.T) {
	needRedis(t)
	bank := demobank.New(nil)
	backend := enginetest.NewBackend(bank)
	bankSrv := httptest.NewServer(backend)
	defer bankSrv.Close()
	tn, err := demobank.Tenant(bankSrv.URL, bankSrv.URL)
	if err != nil {
		t.Fatal(err)
	}
	tenants, err := engine.NewStaticTenants(tn)
	if err != nil {
		t.Fatal(err)
	}
	p := prefix(t)
	raw := client(t, standalone)
	replica := func(sealWith []byte) *httptest.Server {
		store := redisstore.New(client(t, standalone), &redisstore.Options{Prefix: p, Timeout: generous, SealKey: sealWith})
		e, err := engine.New(engine.Config{Tenants: tenants, Model: intent.New(nil), Toolset: httptools.New(nil),
			SigningKey: sealKey, Sessions: store, Replay: store, Actions: store, RateLimiter: store, TurnLog: store,
			Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
		if err != nil {
			t.Fatal(err)
		}
		srv := httptest.NewServer(e.Handler())
		t.Cleanup(srv.Close)
		return srv
	}
	a, b, stranger := replica(sealKey), replica(sealKey), replica(otherSealKey)
	do := func(srv *httptest.Server, method, path, body string, h ...string) (int, string) {
		t.Helper()
		req, _ := http.NewRequestWithContext(t.Context(), method, srv.URL+path, strings.NewReader(body))
		req.Header = http.Header{"X-Engine-Key": {demobank.EngineKey}, "X-Token": {userToken}, "Content-Type": {"application/json"},
			"Accept": {"text/event-stream"}, "X-Request-Id": {"prod-sealed-test"}}
		for i := 0; i < len(h); i += 2 {
			req.Header.Set(h[i], h[i+1])
		}
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		out, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(out)
	}

	status, turn := do(a, http.MethodPost, "/engine", `{"transcript":"send 20 dollars to Alex"}`)
	id := regexp.MustCompile(`"turnId":"([^"]+)"`).FindStringSubmatch(turn)
	if status != 200 || id == nil || !strings.Contains(turn, "Alex") {
		t.Fatalf("turn: %d %s", status, turn)
	}
	j := strings.LastIndex(turn, "event: done\ndata: ")
	var spec widgets.Spec
	if err := json.Unmarshal([]byte(strings.TrimSpace(turn[j+len("event: done\ndata: "):])), &spec); err != nil {
		t.Fatal(err)
	}
	var body string
	for _, w := range spec.Widgets {
		if c, ok := w.(widgets.Confirm); ok {
			body = executeBody(c.Execute)
		}
	}
	if body == "" {
		t.Fatalf("no confirm in %s", turn)
	}

	// The resume, on replica B, from the first event: the rest of the turn as A sent it.
	resumed := func(srv *httptest.Server) (int, string) {
		return do(srv, http.MethodGet, "/engine/turns/"+id[1], "", "Last-Event-ID", "1")
	}
	waitFor(t, func() bool { s, body := resumed(b); return s == 200 && strings.Contains(body, "event: done") })
	if s, got := resumed(b); s != 200 || !strings.Contains(got, "Alex") || !strings.Contains(got, "event: done") {
		t.Errorf("resume on B: %d %s", s, got)
	}
	status, reply := do(a, http.MethodPost, "/engine/execute", body)
	if status != 200 || !strings.Contains(reply, "Money sent") {
		t.Fatalf("execute on A: %d %s", status, reply)
	}
	if s, again := do(b, http.MethodPost, "/engine/execute", body); s != 200 || again != reply {
		t.Errorf("the replay on B: %d %s, want %s", s, again, reply)
	}

	if v := rawValues(t, raw, p); strings.Contains(v, "Alex") || strings.Contains(v, "20.00") {
		t.Errorf("Redis holds the payee or the amount:\n%s", v)
	}

	// A replica with another key reads nothing, and runs nothing again.
	if s, got := resumed(stranger); s != 404 || !strings.Contains(got, engine.CodeNotFound) {
		t.Errorf("resume on a replica with another key: %d %s", s, got)
	}
	if s, got := do(stranger, http.MethodPost, "/engine/execute", body); s != 503 || !strings.Contains(got, engine.CodeStoreUnavailable) || strings.Contains(got, "Alex") {
		t.Errorf("the replay on a replica with another key: %d %s", s, got)
	}
	if n := bank.Transfers(userToken); n != 1 {
		t.Errorf("%d transfers at the bank, want 1", n)
	}
}

// waitFor waits up to 5 s for ok, the turn's last events reaching the log after its client
// got them.
func waitFor(t *testing.T, ok func() bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	for !ok() {
		select {
		case <-ctx.Done():
			t.Fatal("timed out")
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// TestSealedFollowRefusesAnotherKey: a resume that waits for a running turn's next event, on
// a store with another key, gets ErrTurnNotFound when the event comes, never its content.
func TestSealedFollowRefusesAnotherKey(t *testing.T) {
	needRedis(t)
	ctx := t.Context()
	p := prefix(t)
	sealed := redisstore.New(client(t, standalone), &redisstore.Options{Prefix: p, Timeout: generous, SealKey: sealKey})
	other := redisstore.New(client(t, standalone), &redisstore.Options{Prefix: p, Timeout: generous, SealKey: otherSealKey})
	owner := &engine.TurnOwner{Tenant: "pk_demo", User: "u1"}
	keep := time.Now().Add(time.Minute)
	if err := sealed.AppendEvents(ctx, "running", owner, []engine.LoggedEvent{{ID: 1, Name: "start", Data: []byte(`{}`)}}, false, keep); err != nil {
		t.Fatal(err)
	}
	got := make(chan error, 1)
	go func() {
		rec, err := other.ReadEvents(ctx, "running", 1, 10, 3*time.Second)
		if err == nil {
			err = errors.New("no error")
			if len(rec.Events) > 0 {
				err = errors.New("an event: " + string(rec.Events[0].Data))
			}
		}
		got <- err
	}()
	time.Sleep(200 * time.Millisecond) // the read waits in Redis
	ev := []engine.LoggedEvent{{ID: 2, Name: "speak", Data: []byte(`{"delta":"` + sentinel + `"}`)}}
	if err := sealed.AppendEvents(ctx, "running", nil, ev, false, keep); err != nil {
		t.Fatal(err)
	}
	if err := <-got; !errors.Is(err, engine.ErrTurnNotFound) {
		t.Errorf("following with another key: %v; want ErrTurnNotFound", err)
	}
}
