package engine_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/convengine/engine"
	"github.com/convengine/engine/enginetest"
	"github.com/convengine/engine/examples/demobank"
	"github.com/convengine/engine/internal/testkit"
	"github.com/convengine/engine/redisstore"
	"github.com/convengine/engine/widgets"
)

// forgetfulBank is the demo bank behind a proxy that makes it not idempotent: every call to
// POST /transfers reaches the bank under a new Idempotency-Key, after a pause during which the
// engine's client may go away (the bank goes on regardless, as a real one would).
type forgetfulBank struct {
	calls atomic.Int32
	hold  atomic.Int64 // nanoseconds each transfer waits before it reaches the bank
}

func newForgetfulBank(t *testing.T, d *enginetest.Demo) *forgetfulBank {
	b := &forgetfulBank{}
	target, _ := url.Parse(d.BankURL)
	proxy := httputil.NewSingleHostReverseProxy(target)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && r.URL.Path == "/transfers" {
			n := b.calls.Add(1)
			time.Sleep(time.Duration(b.hold.Load()))
			r = r.Clone(context.WithoutCancel(r.Context()))
			r.Header.Set("Idempotency-Key", "forgetful-"+time.Now().Format(time.RFC3339Nano)+"-"+string(rune('a'+n%26)))
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	for _, env := range d.Tenant.Environments {
		env.BackendURL = srv.URL
	}
	return b
}

// executeOver posts an execute over the demo's real HTTP server with ctx.
func executeOver(ctx context.Context, d *enginetest.Demo, hdr http.Header, body string) (int, string, error) {
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, d.URL+engine.PathExecute, strings.NewReader(body))
	req.Header = hdr
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), err
}

// actionID is the store's id of the action of a confirm widget: the tenant and the token's jti.
func actionID(t *testing.T, tenant string, c widgets.Confirm) string {
	parts := strings.Split(c.Execute.Token, ".")
	payload, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		t.Fatal(err)
	}
	var claims struct {
		ID string `json:"jti"`
	}
	json.Unmarshal(payload, &claims)
	return tenant + ":" + claims.ID
}

// TestActionsRunOnceUnderFaults runs confirmed transfers against a bank that is not idempotent
// while the client disconnects mid-call and retries, duplicates run at once, and a replica dies
// holding the claim, on the in-memory store and on Redis: the bank is called once each time.
func TestActionsRunOnceUnderFaults(t *testing.T) {
	stores := map[string]func(t *testing.T, clock *enginetest.Clock) engine.ActionStore{
		"memory": func(_ *testing.T, clock *enginetest.Clock) engine.ActionStore {
			return &engine.MemoryStore{Now: clock.Now}
		},
		"redis": func(t *testing.T, clock *enginetest.Clock) engine.ActionStore {
			srv := testkit.StartRedisT(t)
			client := redis.NewClient(&redis.Options{Addr: srv.Addr})
			t.Cleanup(func() { client.Close() })
			return redisstore.New(client, &redisstore.Options{Now: clock.Now})
		},
	}
	for name, newStore := range stores {
		t.Run(name, func(t *testing.T) {
			clock := enginetest.NewClock(time.Now())
			store := newStore(t, clock)
			d := newDemo(t, &enginetest.DemoOptions{Config: engine.Config{Actions: store, Now: clock.Now}})
			bank := newForgetfulBank(t, d)
			body := func(c widgets.Confirm) string {
				return executeBody(c.Execute, `{"method":"faceid","verifiedAt":"`+clock.Now().UTC().Format(time.RFC3339)+`"}`)
			}

			t.Run("the client goes away mid-call and retries", func(t *testing.T) {
				c := confirmFor(t, d, demobank.EngineKey, "send 11 dollars to Alex")
				before := bank.calls.Load()
				bank.hold.Store(int64(300 * time.Millisecond))
				defer bank.hold.Store(0)
				ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
				_, _, err := executeOver(ctx, d, demoHeaders(), body(c))
				cancel()
				if err == nil {
					t.Fatal("the first execute was not cut off")
				}
				var status int
				var reply string
				waitFor(t, "the retry is answered", func() bool {
					status, reply, _ = executeOver(t.Context(), d, demoHeaders(), body(c))
					return status != http.StatusConflict
				})
				if status != 200 || !strings.Contains(reply, "$11.00 to Alex") || bank.calls.Load() != before+1 {
					t.Fatalf("%d %s after %d bank calls", status, reply, bank.calls.Load()-before)
				}
			})

			t.Run("twenty duplicates at once", func(t *testing.T) {
				c := confirmFor(t, d, demobank.EngineKey, "send 12 dollars to Alex")
				before := bank.calls.Load()
				bank.hold.Store(int64(100 * time.Millisecond))
				defer bank.hold.Store(0)
				var wg sync.WaitGroup
				var ok, busy atomic.Int32
				for range 20 {
					wg.Go(func() {
						status, reply, err := executeOver(t.Context(), d, demoHeaders(), body(c))
						switch {
						case err == nil && status == 200 && strings.Contains(reply, "$12.00 to Alex"):
							ok.Add(1)
						case err == nil && status == http.StatusConflict:
							busy.Add(1)
						default:
							t.Errorf("%d %s %v", status, reply, err)
						}
					})
				}
				wg.Wait()
				if bank.calls.Load() != before+1 || ok.Load() < 1 {
					t.Fatalf("%d bank calls; %d answered, %d told it runs", bank.calls.Load()-before, ok.Load(), busy.Load())
				}
			})

			t.Run("a replica dies holding the claim", func(t *testing.T) {
				c := confirmFor(t, d, demobank.EngineKey, "send 13 dollars to Alex")
				before := bank.calls.Load()
				id := actionID(t, d.Tenant.Key, c)
				// The dead replica's claim. Redis counts its lease in real time, the memory store
				// by the clock: a short lease, and the clock moved past it.
				if _, err := store.BeginAction(t.Context(), id, "dead-replica", clock.Now().Add(500*time.Millisecond)); err != nil {
					t.Fatal(err)
				}
				if status, reply, _ := executeOver(t.Context(), d, demoHeaders(), body(c)); status != http.StatusConflict {
					t.Fatalf("within the dead replica's lease: %d %s", status, reply)
				}
				clock.Add(time.Second)
				waitFor(t, "the lease has passed", func() bool {
					status, _, _ := executeOver(t.Context(), d, demoHeaders(), body(c))
					return status == 200
				})
				if err := store.FinishAction(t.Context(), id, "dead-replica", []byte(`{"late":true}`), clock.Now().Add(time.Hour)); err == nil {
					t.Error("the dead replica recorded over the action that ran")
				}
				status, reply, _ := executeOver(t.Context(), d, demoHeaders(), body(c))
				if status != 200 || !strings.Contains(reply, "$13.00 to Alex") || bank.calls.Load() != before+1 {
					t.Fatalf("%d %s after %d bank calls", status, reply, bank.calls.Load()-before)
				}
			})
		})
	}
}

// TestActionTokensStayWhereTheyWereMinted: a token minted for one user, or in one environment,
// does not run for another user or in another environment, before or after it ran; a replay by
// another user gets the refusal, not the first user's reply.
func TestActionTokensStayWhereTheyWereMinted(t *testing.T) {
	d := newDemo(t, nil)
	c := confirmFor(t, d, demobank.EngineKey, "send 14 dollars to Alex")
	other := demoHeaders()
	other.Set("X-Token", "someone-else")
	staging := demoHeaders()
	staging.Set("X-Request-ID", "stg-test-1")
	refused := func(hdr http.Header, when string) {
		t.Helper()
		status, reply, err := executeOver(t.Context(), d, hdr, executeBody(c.Execute, freshAuth()))
		if err != nil || status != http.StatusForbidden || !strings.Contains(reply, engine.CodeInvalidActionToken) || strings.Contains(reply, "$14.00") {
			t.Fatalf("%s: %d %s %v", when, status, reply, err)
		}
	}
	calls := len(d.Backend.Received())
	refused(other, "another user")
	refused(staging, "the staging environment")
	if len(d.Backend.Received()) != calls {
		t.Fatal("a refused execute reached the bank")
	}
	if status, reply, _ := executeOver(t.Context(), d, demoHeaders(), executeBody(c.Execute, freshAuth())); status != 200 || !strings.Contains(reply, "$14.00 to Alex") {
		t.Fatalf("its own user: %d %s", status, reply)
	}
	refused(other, "another user's replay")
	refused(staging, "a replay on staging")
}
