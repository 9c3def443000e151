package record_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/convengine/engine"
	"github.com/convengine/engine/record"
	"github.com/convengine/engine/record/sqlitestore"
)

// flaky is a Store that fails every append, checkpoint and key read while down.
type flaky struct {
	record.Store
	down    atomic.Bool
	appends atomic.Int64
}

var errDown = errors.New("store down")

func (f *flaky) Append(ctx context.Context, c record.Chain, es []record.Entry, link func(record.Head, []record.Entry) error) (record.Head, error) {
	if f.down.Load() {
		return record.Head{}, errDown
	}
	f.appends.Add(1)
	return f.Store.Append(ctx, c, es, link)
}

func (f *flaky) Key(ctx context.Context, tenant, user string) (record.DataKey, error) {
	if f.down.Load() {
		return record.DataKey{}, errDown
	}
	return f.Store.Key(ctx, tenant, user)
}

func (f *flaky) Checkpoint(ctx context.Context, sign func(*record.Checkpoint, []record.Head) (*record.Checkpoint, error)) (*record.Checkpoint, error) {
	if f.down.Load() {
		return nil, errDown
	}
	return f.Store.Checkpoint(ctx, sign)
}

func TestAFailingStoreKeepsTurnsAndRefusesActions(t *testing.T) {
	s, err := sqlitestore.Open(context.Background(), t.TempDir()+"/record.db", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	fl := &flaky{Store: s}
	rec, err := record.New(fl, &record.Options{Key: testKey, BatchEvery: 10 * time.Millisecond, ActionTimeout: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	rec.Turn(ctx, turn("ann", "c1", t0, "before", "ok"))
	if err := rec.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	fl.down.Store(true)
	for i := range 20 {
		rec.Turn(ctx, turn("ann", "c1", t0.Add(time.Duration(i+1)*time.Second), fmt.Sprint("while down ", i), "ok"))
	}
	if _, err := rec.Action(ctx, action("ann", "c1", t0.Add(time.Minute))); err == nil {
		t.Fatal("an action was accepted while the store failed")
	}
	time.Sleep(300 * time.Millisecond) // the writer retries, and fails
	st := rec.Stats()
	if st.Queued != 20 || st.Failures == 0 || st.Dropped != 0 {
		t.Fatalf("while down: %+v, want 20 queued, failures counted, none dropped", st)
	}
	fl.down.Store(false)
	done, err := rec.Action(ctx, action("ann", "c1", t0.Add(time.Minute)))
	if err != nil {
		t.Fatalf("an action after recovery: %v", err)
	}
	fl.down.Store(true)
	done(ctx, &engine.ActionOutcome{Time: t0.Add(time.Minute), Outcome: "ok"}) // queued: the store is down
	fl.down.Store(false)
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := rec.Close(cctx); err != nil {
		t.Fatal(err)
	}
	es, err := s.Entries(ctx, record.ChainID("bank", "live", "ann", "c1"), 0, 1000)
	if err != nil {
		t.Fatal(err)
	}
	// The turn before, the 20 kept while down (in order, once each), the action, its outcome.
	if len(es) != 23 || es[21].Kind != record.KindAction || es[22].Kind != record.KindOutcome {
		t.Fatalf("%d entries after recovery, want 23 ending with the action and its outcome", len(es))
	}
	pub, _ := record.PublicKey(testKey)
	rep, err := record.Verify(ctx, s, []ed25519.PublicKey{pub})
	if err != nil || !rep.OK() || rep.Uncovered != 0 {
		t.Fatalf("Verify after recovery: %+v %v", rep, err)
	}
	if st := rec.Stats(); st.Written != 23 || st.Dropped != 0 || st.Queued != 0 {
		t.Fatalf("stats %+v", st)
	}
}

func TestAFullQueueCountsAndAlarms(t *testing.T) {
	s, err := sqlitestore.Open(context.Background(), t.TempDir()+"/record.db", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	fl := &flaky{Store: s}
	fl.down.Store(true)
	var alarms atomic.Int64
	rec, err := record.New(fl, &record.Options{Key: testKey, MaxQueue: 5, OnAlarm: func(a record.Alarm) {
		if a.Tenant == "bank" && a.Kind == record.KindTurn {
			alarms.Add(1)
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 8 {
		rec.Turn(context.Background(), turn("ann", "c1", t0.Add(time.Duration(i)*time.Second), "x", "y"))
	}
	if st := rec.Stats(); st.Dropped != 3 || st.Queued != 5 || alarms.Load() != 3 {
		t.Fatalf("stats %+v, %d alarms; want 3 dropped and alarmed", st, alarms.Load())
	}
	fl.down.Store(false)
	if err := rec.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
}

func TestCloseWithTheStoreDownSaysWhatIsLost(t *testing.T) {
	s, err := sqlitestore.Open(context.Background(), t.TempDir()+"/record.db", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	fl := &flaky{Store: s}
	fl.down.Store(true)
	rec, _ := record.New(fl, &record.Options{Key: testKey})
	rec.Turn(context.Background(), turn("ann", "c1", t0, "x", "y"))
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	if err := rec.Close(ctx); err == nil {
		t.Fatal("Close lost a turn and said nothing")
	}
	rec.Turn(context.Background(), turn("ann", "c1", t0, "after", "close"))
	if _, err := rec.Action(context.Background(), action("ann", "c1", t0)); !errors.Is(err, record.ErrClosed) {
		t.Fatalf("an action after Close: %v", err)
	}
}

func TestEraseShredsWordsAndKeepsTheChain(t *testing.T) {
	f := newFixture(t, nil)
	f.conversation(t, "ann", "c1", 3)
	f.conversation(t, "bob", "c2", 1)
	ctx := context.Background()
	if err := f.rec.Erase(ctx, "bank", "ann"); err != nil {
		t.Fatal(err)
	}
	if rep := f.verify(t); !rep.OK() {
		t.Fatalf("Verify after erasure: %v", rep.Err())
	}
	exp := f.export(t, "ann")
	if bytes.Contains(exp, []byte("ann says")) || bytes.Contains(exp, []byte("answer 1")) {
		t.Fatal("an erased user's words are in their export")
	}
	for _, kept := range []string{"Send 20 to Alex?", "insufficient funds", `"erased":true`} {
		if !bytes.Contains(exp, []byte(kept)) {
			t.Fatalf("the export after erasure lacks %q", kept)
		}
	}
	if rep, err := record.VerifyExport(bytes.NewReader(exp), f.pub); err != nil || !rep.OK() {
		t.Fatalf("VerifyExport after erasure: %v %v", err, rep.Problems)
	}
	if !bytes.Contains(f.export(t, "bob"), []byte("bob says 0")) {
		t.Fatal("erasing ann erased bob")
	}
	// A user who comes back gets a new key; the old words stay unreadable.
	f.conversation(t, "ann", "c3", 1)
	exp = f.export(t, "ann")
	if !bytes.Contains(exp, []byte("ann says 0")) || bytes.Count(exp, []byte("ann says")) != 1 {
		t.Fatalf("after coming back, the export holds %d of ann's turns, want the new one", bytes.Count(exp, []byte("ann says")))
	}
	if rep := f.verify(t); !rep.OK() {
		t.Fatalf("Verify: %v", rep.Err())
	}
}

func TestAHeldUserIsNotErasedNorPruned(t *testing.T) {
	f := newFixture(t, nil)
	f.conversation(t, "ann", "c1", 1)
	ctx := context.Background()
	if err := f.rec.Hold(ctx, "bank", "ann"); err != nil {
		t.Fatal(err)
	}
	if err := f.rec.Erase(ctx, "bank", "ann"); !errors.Is(err, record.ErrLegalHold) {
		t.Fatalf("Erase under hold: %v, want ErrLegalHold", err)
	}
	if n, err := f.rec.Sweep(ctx, "bank", record.Retention{Days: 1, ActionDays: 1}); err != nil || n != 0 {
		t.Fatalf("Sweep under hold pruned %d: %v", n, err)
	}
	if !bytes.Contains(f.export(t, "ann"), []byte("ann says 0")) {
		t.Fatal("a held user's words are gone")
	}
	if err := f.rec.Release(ctx, "bank", "ann"); err != nil {
		t.Fatal(err)
	}
	if err := f.rec.Erase(ctx, "bank", "ann"); err != nil {
		t.Fatalf("Erase after release: %v", err)
	}
}

func TestRetentionKeepsYoungActionEvidence(t *testing.T) {
	now := t0.AddDate(0, 0, 40)
	f := newFixture(t, &record.Options{Now: func() time.Time { return now }})
	f.conversation(t, "ann", "with-actions", 1)
	f.rec.Turn(context.Background(), turn("ann", "talk", t0, "hello", "hi"))
	if err := f.rec.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	n, err := f.rec.Sweep(context.Background(), "bank", record.Retention{Days: 30, ActionDays: 365})
	if err != nil || n != 1 {
		t.Fatalf("Sweep pruned %d, %v; want the conversation without actions", n, err)
	}
	if _, err := f.store.Chain(context.Background(), record.ChainID("bank", "live", "ann", "with-actions")); err != nil {
		t.Fatalf("a conversation with young action evidence was pruned: %v", err)
	}
	if _, err := f.rec.Checkpoint(context.Background()); err != nil {
		t.Fatal(err)
	}
	if rep := f.verify(t); !rep.OK() || rep.Prunes != 0 {
		t.Fatalf("Verify after a prune: %v", rep.Problems)
	}
}

func TestAClockThatStepsBackKeepsTheChain(t *testing.T) {
	f := newFixture(t, nil)
	ctx := context.Background()
	for i, at := range []time.Time{t0, t0.Add(time.Hour), t0.Add(-time.Hour), t0.Add(-2 * time.Hour), t0.Add(time.Minute)} {
		f.rec.Turn(ctx, turn("ann", "c1", at, fmt.Sprint("turn ", i), "ok"))
	}
	if err := f.rec.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	es := f.entries(t, "ann", "c1")
	for i, e := range es {
		if e.Seq != int64(i+1) {
			t.Fatalf("entry %d has seq %d", i, e.Seq)
		}
	}
	if !es[2].At.Before(es[1].At) {
		t.Fatal("the test's clock did not step back")
	}
	if rep := f.verify(t); !rep.OK() {
		t.Fatalf("Verify: %v", rep.Err())
	}
}

func TestTwoReplicasAppendToOneConversation(t *testing.T) {
	a := newFixture(t, &record.Options{BatchEvery: 5 * time.Millisecond, BatchSize: 3})
	b := &fixture{file: a.file}
	b.open(t, &record.Options{BatchEvery: 7 * time.Millisecond, BatchSize: 2})
	ctx := context.Background()
	var wg sync.WaitGroup
	for r, f := range []*fixture{a, b} {
		wg.Go(func() {
			for i := range 40 {
				f.rec.Turn(ctx, turn("ann", "shared", t0.Add(time.Duration(i)*time.Second), fmt.Sprintf("replica %d turn %d", r, i), "ok"))
				if i%10 == 9 {
					done, err := f.rec.Action(ctx, action("ann", "shared", t0.Add(time.Duration(i)*time.Second)))
					if err != nil {
						t.Errorf("Action: %v", err)
						continue
					}
					done(ctx, &engine.ActionOutcome{Time: t0, Outcome: "ok"})
				}
			}
		})
	}
	wg.Wait()
	a.close(t)
	b.close(t)
	s, err := sqlitestore.Open(ctx, a.file, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	es, err := s.Entries(ctx, record.ChainID("bank", "live", "ann", "shared"), 0, 1000)
	if err != nil || len(es) != 2*(40+8) {
		t.Fatalf("%d entries, %v; want %d", len(es), err, 2*48)
	}
	rep, err := record.Verify(ctx, s, a.pub)
	if err != nil || !rep.OK() || rep.Uncovered != 0 {
		t.Fatalf("Verify: %+v %v", rep, err)
	}
}
