package enginetest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/convengine/engine"
)

// Store is what the engine keeps state in: sessions, single-use values and action records.
type Store interface {
	engine.SessionStore
	engine.ReplayStore
	engine.ActionStore
}

// StoreSuite checks that a [Store] keeps the contracts of [engine.SessionStore],
// [engine.ReplayStore] and [engine.ActionStore] as the engine relies on them: round trips,
// expiry, atomicity under 100 concurrent callers, and ids of several tenants kept apart.
// [engine.MemoryStore] passes it; implementers of a shared store run it from a test:
//
//	enginetest.StoreSuite{New: func(t *testing.T) enginetest.Store { return newStore(t) }}.Run(t)
//
// Expiry is real: the suite waits about a second for records to expire, its checks in
// parallel.
type StoreSuite struct {
	// New returns an empty store for one check, whose clock is time.Now.
	New func(t *testing.T) Store
	// TurnLog, when set, returns an empty [engine.TurnLog] for one check, whose contract the
	// suite checks too: events in order after a given id, owners, waiting for events, expiry,
	// and readers following a writer.
	TurnLog func(t *testing.T) engine.TurnLog
}

// Run runs the suite's checks as parallel subtests.
func (s StoreSuite) Run(t *testing.T) {
	for _, c := range []struct {
		name string
		f    func(*testing.T, Store)
	}{
		{"SessionRoundTrip", sessionRoundTrip},
		{"SessionExpiry", sessionExpiry},
		{"ClaimOnce", claimOnce},
		{"ClaimExpiry", claimExpiry},
		{"BeginActionOnce", beginActionOnce},
		{"LeaseExpiry", leaseExpiry},
		{"Abandon", abandon},
		{"ResultExpiry", resultExpiry},
		{"Namespaces", namespaces},
		{"BindOnce", bindOnce},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			c.f(t, s.New(t))
		})
	}
	if s.TurnLog == nil {
		return
	}
	for _, c := range []struct {
		name string
		f    func(*testing.T, engine.TurnLog)
	}{
		{"TurnLogRoundTrip", turnLogRoundTrip},
		{"TurnLogWaits", turnLogWaits},
		{"TurnLogExpiry", turnLogExpiry},
		{"TurnLogFollowers", turnLogFollowers},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			c.f(t, s.TurnLog(t))
		})
	}
}

// window is how long the short-lived records of the suite last.
const window = 500 * time.Millisecond

// eventually polls cond until it holds, failing after 5 s.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); !cond(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%s did not happen within 5 s", what)
		}
	}
}

func sessionRoundTrip(t *testing.T, st Store) {
	ctx := t.Context()
	now := time.Now()
	want := &engine.Session{ID: "3f1c3a57-4a5e-4a3e-9d7b-2d8b7f0e9c11", TenantKey: "pk_a", CreatedAt: now,
		ExpiresAt: now.Add(time.Hour), KeyThumbprint: "NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9Xs",
		Metadata: json.RawMessage(`{"device":"ios","app":"1.2.3"}`)}
	if err := st.PutSession(ctx, want); err != nil {
		t.Fatal(err)
	}
	got, err := st.Session(ctx, want.ID)
	if err != nil {
		t.Fatal(err)
	}
	checkSession(t, got, want)
	got.TenantKey = "changed"
	if again, _ := st.Session(ctx, want.ID); again == nil || again.TenantKey != "pk_a" {
		t.Errorf("changing a returned session changed the stored one: %+v", again)
	}

	bare := &engine.Session{ID: "b1d2c3e4-0000-4000-8000-000000000001", TenantKey: "pk_a", CreatedAt: now, ExpiresAt: now.Add(time.Hour)}
	if err := st.PutSession(ctx, bare); err != nil {
		t.Fatal(err)
	}
	got, err = st.Session(ctx, bare.ID)
	if err != nil {
		t.Fatal(err)
	}
	checkSession(t, got, bare)

	replaced := *want
	replaced.KeyThumbprint, replaced.Metadata = "", nil
	if err := st.PutSession(ctx, &replaced); err != nil {
		t.Fatal(err)
	}
	if got, err = st.Session(ctx, want.ID); err != nil {
		t.Fatal(err)
	}
	checkSession(t, got, &replaced)

	if _, err := st.Session(ctx, "00000000-0000-4000-8000-000000000000"); !errors.Is(err, engine.ErrSessionNotFound) {
		t.Errorf("unknown session: %v, want ErrSessionNotFound", err)
	}
}

func checkSession(t *testing.T, got, want *engine.Session) {
	t.Helper()
	if got.ID != want.ID || got.TenantKey != want.TenantKey || !got.CreatedAt.Equal(want.CreatedAt) ||
		!got.ExpiresAt.Equal(want.ExpiresAt) || got.KeyThumbprint != want.KeyThumbprint || !sameJSON(got.Metadata, want.Metadata) {
		t.Errorf("session %+v\nwant    %+v", got, want)
	}
}

// sameJSON reports whether a and b are the same JSON value, or both absent.
func sameJSON(a, b json.RawMessage) bool {
	if len(a) == 0 || len(b) == 0 {
		return len(a) == len(b)
	}
	var x, y bytes.Buffer
	return json.Compact(&x, a) == nil && json.Compact(&y, b) == nil && bytes.Equal(x.Bytes(), y.Bytes())
}

func sessionExpiry(t *testing.T, st Store) {
	ctx := t.Context()
	now := time.Now()
	s := &engine.Session{ID: "e0e0e0e0-0000-4000-8000-000000000001", TenantKey: "pk_a", CreatedAt: now, ExpiresAt: now.Add(window)}
	if err := st.PutSession(ctx, s); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Session(ctx, s.ID); err != nil {
		t.Fatalf("a session that has not expired: %v", err)
	}
	eventually(t, "the session's expiry", func() bool {
		_, err := st.Session(ctx, s.ID)
		return errors.Is(err, engine.ErrSessionNotFound)
	})
	past := &engine.Session{ID: "e0e0e0e0-0000-4000-8000-000000000002", TenantKey: "pk_a", CreatedAt: now.Add(-time.Hour), ExpiresAt: now.Add(-time.Minute)}
	if err := st.PutSession(ctx, past); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Session(ctx, past.ID); !errors.Is(err, engine.ErrSessionNotFound) {
		t.Errorf("a session stored after its expiry: %v, want ErrSessionNotFound", err)
	}
}

// concurrently runs f 100 times at once and returns the results in order.
func concurrently[T any](f func() T) []T {
	out := make([]T, 100)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range out {
		wg.Go(func() {
			<-start
			out[i] = f()
		})
	}
	close(start)
	wg.Wait()
	return out
}

func claimOnce(t *testing.T, st Store) {
	ctx := t.Context()
	exp := time.Now().Add(time.Hour)
	type res struct {
		ok  bool
		err error
	}
	won := 0
	for _, r := range concurrently(func() res { ok, err := st.Claim(ctx, "pk_a:jti-1", exp); return res{ok, err} }) {
		if r.err != nil {
			t.Fatal(r.err)
		}
		if r.ok {
			won++
		}
	}
	if won != 1 {
		t.Fatalf("100 concurrent claims of one value: %d succeeded, want 1", won)
	}
	if ok, err := st.Claim(ctx, "pk_a:jti-1", exp); ok || err != nil {
		t.Errorf("a claimed value claimed again: %v %v", ok, err)
	}
	if ok, err := st.Claim(ctx, "pk_a:jti-2", exp); !ok || err != nil {
		t.Errorf("another value: %v %v", ok, err)
	}
}

func claimExpiry(t *testing.T, st Store) {
	ctx := t.Context()
	if ok, err := st.Claim(ctx, "pk_a:short", time.Now().Add(window)); !ok || err != nil {
		t.Fatalf("first claim: %v %v", ok, err)
	}
	if ok, err := st.Claim(ctx, "pk_a:short", time.Now().Add(time.Hour)); ok || err != nil {
		t.Fatalf("a claim before expiry: %v %v", ok, err)
	}
	eventually(t, "the claim's expiry", func() bool {
		ok, err := st.Claim(ctx, "pk_a:short", time.Now().Add(time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		return ok
	})
	// A value whose expiry has passed is not recorded, and refused while a live claim holds it.
	if ok, err := st.Claim(ctx, "pk_a:short", time.Now().Add(-time.Second)); ok || err != nil {
		t.Errorf("an expired claim over a live one: %v %v", ok, err)
	}
	if ok, err := st.Claim(ctx, "pk_a:past", time.Now().Add(-time.Second)); !ok || err != nil {
		t.Errorf("an expired claim: %v %v", ok, err)
	}
	if ok, err := st.Claim(ctx, "pk_a:past", time.Now().Add(time.Hour)); !ok || err != nil {
		t.Errorf("a claim after an expired one: %v %v", ok, err)
	}
}

type begun struct {
	owner  string
	result []byte
	err    error
}

var owners atomic.Int64

// begin claims id for a new owner.
func begin(ctx context.Context, st Store, id string, lease time.Duration) begun {
	owner := fmt.Sprint("owner-", owners.Add(1))
	r, err := st.BeginAction(ctx, id, owner, time.Now().Add(lease))
	return begun{owner, r, err}
}

func beginActionOnce(t *testing.T, st Store) {
	ctx := t.Context()
	id := "pk_a:action-1"
	claimed, busy := 0, 0
	var winner string
	for _, b := range concurrently(func() begun { return begin(ctx, st, id, time.Minute) }) {
		switch {
		case b.err == nil && b.result == nil:
			claimed++
			winner = b.owner
		case errors.Is(b.err, engine.ErrActionInProgress) && b.result == nil:
			busy++
		default:
			t.Fatalf("BeginAction: %q %v", b.result, b.err)
		}
	}
	if claimed != 1 || busy != 99 {
		t.Fatalf("100 concurrent begins: %d claims and %d in progress, want 1 and 99", claimed, busy)
	}
	if err := st.FinishAction(ctx, id, "not-"+winner, []byte(`{"forged":true}`), time.Now().Add(time.Hour)); !errors.Is(err, engine.ErrActionInProgress) {
		t.Fatalf("a finish by another owner: %v", err)
	}
	reply := []byte(`{"done":{"type":"success","title":"Money sent"},"speak":"Done."}`)
	if err := st.FinishAction(ctx, id, winner, reply, time.Now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	reply[2] = 'X' // the store keeps its own copy
	for _, b := range concurrently(func() begun { return begin(ctx, st, id, time.Minute) }) {
		if b.err != nil || string(b.result) != `{"done":{"type":"success","title":"Money sent"},"speak":"Done."}` {
			t.Fatalf("BeginAction of a finished action: %q %v", b.result, b.err)
		}
	}
	if err := st.FinishAction(ctx, id, winner, []byte(`{"again":true}`), time.Now().Add(time.Hour)); !errors.Is(err, engine.ErrActionInProgress) {
		t.Fatalf("a second finish replaced the result: %v", err)
	}
}

// leaseExpiry lets a claim's lease pass, as when its replica dies: another owner takes it, and
// the first owner can then neither record its result nor release the new claim.
func leaseExpiry(t *testing.T, st Store) {
	ctx := t.Context()
	id := "pk_a:crashed"
	first := begin(ctx, st, id, window)
	if first.err != nil || first.result != nil {
		t.Fatalf("first claim: %q %v", first.result, first.err)
	}
	if b := begin(ctx, st, id, time.Minute); !errors.Is(b.err, engine.ErrActionInProgress) {
		t.Fatalf("a claim within the lease: %q %v", b.result, b.err)
	}
	var second begun
	eventually(t, "the lease's end", func() bool {
		second = begin(ctx, st, id, time.Minute)
		if second.err != nil && !errors.Is(second.err, engine.ErrActionInProgress) {
			t.Fatal(second.err)
		}
		return second.err == nil && second.result == nil
	})
	if b := begin(ctx, st, id, time.Minute); !errors.Is(b.err, engine.ErrActionInProgress) {
		t.Fatalf("the claim taken again does not hold: %q %v", b.result, b.err)
	}
	if err := st.AbandonAction(ctx, id, first.owner); err != nil {
		t.Fatal(err)
	}
	if err := st.FinishAction(ctx, id, first.owner, []byte(`{"late":true}`), time.Now().Add(time.Hour)); !errors.Is(err, engine.ErrActionInProgress) {
		t.Fatalf("the first owner finished over the second's claim: %v", err)
	}
	if b := begin(ctx, st, id, time.Minute); !errors.Is(b.err, engine.ErrActionInProgress) {
		t.Fatalf("the first owner released the second's claim: %q %v", b.result, b.err)
	}
	if err := st.FinishAction(ctx, id, second.owner, []byte(`{"ok":2}`), time.Now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if b := begin(ctx, st, "pk_a:late", -time.Second); b.err != nil || b.result != nil {
		t.Fatalf("a claim whose lease has passed: %q %v", b.result, b.err)
	}
}

func abandon(t *testing.T, st Store) {
	ctx := t.Context()
	if err := st.AbandonAction(ctx, "pk_a:unknown", "anyone"); err != nil {
		t.Errorf("abandoning an unknown action: %v", err)
	}
	id := "pk_a:failed"
	b := begin(ctx, st, id, time.Minute)
	if b.err != nil || b.result != nil {
		t.Fatalf("first claim: %q %v", b.result, b.err)
	}
	if err := st.AbandonAction(ctx, id, "not-"+b.owner); err != nil {
		t.Fatal(err)
	}
	if again := begin(ctx, st, id, time.Minute); !errors.Is(again.err, engine.ErrActionInProgress) {
		t.Fatalf("another owner released the claim: %q %v", again.result, again.err)
	}
	if err := st.AbandonAction(ctx, id, b.owner); err != nil {
		t.Fatal(err)
	}
	b = begin(ctx, st, id, time.Minute)
	if b.err != nil || b.result != nil {
		t.Fatalf("a claim after abandon: %q %v", b.result, b.err)
	}
	if err := st.FinishAction(ctx, id, b.owner, []byte(`{"ok":true}`), time.Now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if err := st.AbandonAction(ctx, id, b.owner); err != nil {
		t.Fatal(err)
	}
	if b := begin(ctx, st, id, time.Minute); b.err != nil || string(b.result) != `{"ok":true}` {
		t.Fatalf("abandon dropped a finished action: %q %v", b.result, b.err)
	}
}

func resultExpiry(t *testing.T, st Store) {
	ctx := t.Context()
	id := "pk_a:old"
	b := begin(ctx, st, id, time.Minute)
	if b.err != nil || b.result != nil {
		t.Fatalf("first claim: %q %v", b.result, b.err)
	}
	if err := st.FinishAction(ctx, id, b.owner, []byte(`{"ok":1}`), time.Now().Add(window)); err != nil {
		t.Fatal(err)
	}
	if b := begin(ctx, st, id, time.Minute); string(b.result) != `{"ok":1}` {
		t.Fatalf("a result before its expiry: %q %v", b.result, b.err)
	}
	eventually(t, "the result's expiry", func() bool {
		b := begin(ctx, st, id, time.Minute)
		if b.err != nil {
			t.Fatal(b.err)
		}
		return b.result == nil
	})
}

func namespaces(t *testing.T, st Store) {
	ctx := t.Context()
	exp := time.Now().Add(time.Hour)
	for i, tenant := range []string{"pk_a", "pk_b", "pk_c:sub"} {
		id := tenant + ":same-jti"
		if ok, err := st.Claim(ctx, id, exp); !ok || err != nil {
			t.Errorf("claim %s: %v %v", id, ok, err)
		}
		b := begin(ctx, st, id, time.Minute)
		if b.err != nil || b.result != nil {
			t.Errorf("begin %s: %q %v", id, b.result, b.err)
		}
		if err := st.FinishAction(ctx, id, b.owner, fmt.Appendf(nil, `{"n":%d}`, i), exp); err != nil {
			t.Fatal(err)
		}
	}
	for i, tenant := range []string{"pk_a", "pk_b", "pk_c:sub"} {
		if b := begin(ctx, st, tenant+":same-jti", time.Minute); string(b.result) != fmt.Sprintf(`{"n":%d}`, i) {
			t.Errorf("%s: %q %v", tenant, b.result, b.err)
		}
	}
	// One id in each store: a claim, an action and a session do not see each other.
	if ok, _ := st.Claim(ctx, "shared-id", exp); !ok {
		t.Error("claim of shared-id refused")
	}
	if b := begin(ctx, st, "shared-id", time.Minute); b.err != nil || b.result != nil {
		t.Errorf("begin of shared-id: %q %v", b.result, b.err)
	}
	if _, err := st.Session(ctx, "shared-id"); !errors.Is(err, engine.ErrSessionNotFound) {
		t.Errorf("session shared-id: %v", err)
	}
}

// bindOnce: of 100 concurrent binds of one key to different values, one value wins and every
// caller is told which; a later bind of the same key gets it too. Stores that are not an
// [engine.Binder] skip it.
func bindOnce(t *testing.T, st Store) {
	b, ok := st.(engine.Binder)
	if !ok {
		t.Skip("the store is not an engine.Binder")
	}
	ctx := t.Context()
	exp := time.Now().Add(time.Hour)
	var n atomic.Int32
	type res struct {
		value, bound string
		err          error
	}
	results := concurrently(func() res {
		v := fmt.Sprint("key-", n.Add(1))
		bound, err := b.Bind(ctx, "pk_a:cred-1", v, exp)
		return res{v, bound, err}
	})
	won := ""
	for _, r := range results {
		if r.err != nil {
			t.Fatal(r.err)
		}
		if r.bound == r.value {
			if won != "" {
				t.Fatalf("two values won the bind: %q and %q", won, r.value)
			}
			won = r.value
		}
	}
	for _, r := range results {
		if r.bound != won {
			t.Fatalf("a caller was told %q bound, not %q", r.bound, won)
		}
	}
	if bound, err := b.Bind(ctx, "pk_a:cred-1", "another", exp); err != nil || bound != won {
		t.Errorf("a later bind: %q %v, want %q", bound, err, won)
	}
	if bound, err := b.Bind(ctx, "pk_b:cred-1", "another", exp); err != nil || bound != "another" {
		t.Errorf("another key: %q %v", bound, err)
	}
}
