package redisstore_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/convengine/engine/handoff"
	"github.com/convengine/engine/redisstore"
)

func newState(id, conv string) *handoff.State {
	now := time.Now().UTC().Truncate(time.Millisecond)
	return &handoff.State{ID: id, Tenant: "pk_demo", User: "u1", ConversationID: conv, Locale: "en", Channel: "text",
		Reason: "the customer asked for a person", Summary: "a double charge on the card [CARD_1]", Status: handoff.StatusQueued,
		Centre: "desk", Created: now, LastCustomer: now, Transcript: []handoff.Line{{Role: "user", Text: "my card is [CARD_1]", At: now}}}
}

// TestHandoffs: two replicas, each with a Store of its own over one server, share handoffs:
// one creates, the other finds it by id and by conversation, waits on its events and is woken
// by the first's append, changes it (one of two concurrent changes wins each time), and sees
// it leave the open list when it ends; a second handoff of an open conversation is refused;
// the per-user count and the conversation's lines are shared; sealed, nothing personal rests
// readable in Redis. On a standalone server and on a Redis Cluster node, which refuses a
// command across slots.
func TestHandoffs(t *testing.T) {
	for name, client := range backends(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			c := client(t)
			opts := &redisstore.Options{Prefix: prefix(t), Timeout: generous, SealKey: []byte("a signing key of thirty-two bytes or more")}
			a := redisstore.New(c, opts).Handoffs()
			b := redisstore.New(c, opts).Handoffs()

			st := newState("h-1", "conv-1")
			if err := a.Create(ctx, st); err != nil {
				t.Fatal(err)
			}
			if err := b.Create(ctx, newState("h-2", "conv-1")); !errors.Is(err, handoff.ErrActive) {
				t.Fatalf("a second handoff of an open conversation: %v, want ErrActive", err)
			}
			got, err := b.Get(ctx, "h-1")
			if err != nil || got.Summary != st.Summary || len(got.Transcript) != 1 || !got.Created.Equal(st.Created) {
				t.Fatalf("Get on the other replica: %+v %v", got, err)
			}
			if got, err := b.Latest(ctx, "pk_demo", "u1", "conv-1"); err != nil || got.ID != "h-1" {
				t.Fatalf("Latest: %+v %v", got, err)
			}
			for _, id := range []string{"nope", strings.Repeat("x", 200), ""} {
				if _, err := b.Get(ctx, id); !errors.Is(err, handoff.ErrNotFound) {
					t.Errorf("Get(%.10q): %v, want ErrNotFound", id, err)
				}
				if _, err := b.Events(ctx, id, 0, 0); !errors.Is(err, handoff.ErrNotFound) {
					t.Errorf("Events(%.10q): %v, want ErrNotFound", id, err)
				}
			}
			if open, err := b.Open(ctx); err != nil || len(open) != 1 || open[0].ID != "h-1" {
				t.Fatalf("Open: %v %v", open, err)
			}

			// The second replica waits; the first's append wakes it.
			woke := make(chan []handoff.Event, 1)
			go func() {
				evs, _ := b.Events(ctx, "h-1", 0, 5*time.Second)
				woke <- evs
			}()
			time.Sleep(50 * time.Millisecond) // let it wait: the wake, not the first read, is tested
			ev := &handoff.Event{Type: "message", From: "person", Agent: "Ana", Text: "Hello, I see the double charge.", At: time.Now()}
			if err := a.Append(ctx, "h-1", ev); err != nil || ev.Seq != 1 {
				t.Fatalf("Append: seq %d %v", ev.Seq, err)
			}
			select {
			case evs := <-woke:
				if len(evs) != 1 || evs[0].Seq != 1 || evs[0].Text != ev.Text || evs[0].Agent != "Ana" {
					t.Fatalf("the waiting replica read %+v", evs)
				}
			case <-time.After(5 * time.Second):
				t.Fatal("the waiting replica was not woken")
			}
			if err := b.Append(ctx, "h-1", &handoff.Event{Type: "message", From: "user", Text: "It was Monday"}); err != nil {
				t.Fatal(err)
			}
			if evs, err := a.Events(ctx, "h-1", 1, 0); err != nil || len(evs) != 1 || evs[0].Seq != 2 {
				t.Fatalf("Events after 1: %+v %v", evs, err)
			}

			// Two replicas join at once: Update decides once.
			var wg sync.WaitGroup
			var mu sync.Mutex
			joined := 0
			for _, s := range []*redisstore.Handoffs{a, b} {
				wg.Add(1)
				go func() {
					defer wg.Done()
					_, err := s.Update(ctx, "h-1", func(x *handoff.State) error {
						if x.Status != handoff.StatusQueued {
							return handoff.ErrEnded
						}
						x.Status, x.Agent = handoff.StatusConnected, "Ana"
						return nil
					})
					if err == nil {
						mu.Lock()
						joined++
						mu.Unlock()
					} else if !errors.Is(err, handoff.ErrEnded) {
						t.Errorf("Update: %v", err)
					}
				}()
			}
			wg.Wait()
			if joined != 1 {
				t.Fatalf("%d replicas joined, want 1", joined)
			}
			if _, err := b.Update(ctx, "h-1", func(x *handoff.State) error {
				x.Status, x.Note, x.Closed = handoff.StatusReleased, "Refund opened.", time.Now()
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			if open, err := a.Open(ctx); err != nil || len(open) != 0 {
				t.Fatalf("Open after the end: %v %v", open, err)
			}
			if got, err := a.Latest(ctx, "pk_demo", "u1", "conv-1"); err != nil || got.Note != "Refund opened." {
				t.Fatalf("Latest after the end: %+v %v", got, err)
			}
			if err := a.Create(ctx, newState("h-3", "conv-1")); err != nil {
				t.Fatalf("a new handoff once the last ended: %v", err)
			}

			for i, want := range []int{1, 2, 3} {
				if n, err := []*redisstore.Handoffs{a, b, a}[i].Count(ctx, "pk_demo\x00u1", time.Hour); err != nil || n != want {
					t.Fatalf("Count %d: %d %v", i, n, err)
				}
			}
			for i := range handoff.MaxLines + 5 {
				if err := a.AddLines(ctx, "pk_demo", "u1", "conv-1", handoff.Line{Role: "user", Text: "line " + string(rune('a'+i%26))}); err != nil {
					t.Fatal(err)
				}
			}
			if lines, err := b.Lines(ctx, "pk_demo", "u1", "conv-1"); err != nil || len(lines) != handoff.MaxLines {
				t.Fatalf("Lines: %d %v", len(lines), err)
			}

			// Sealed: neither the summary nor a message rests readable.
			keys, _ := scan(ctx, c, prefix(t)+"*")
			for _, k := range keys {
				typ, _ := c.Type(ctx, k).Result()
				var dump string
				switch typ {
				case "string":
					dump, _ = c.Get(ctx, k).Result()
				case "stream":
					xs, _ := c.XRange(ctx, k, "-", "+").Result()
					for _, x := range xs {
						dump += x.Values["d"].(string)
					}
				case "list":
					l, _ := c.LRange(ctx, k, 0, -1).Result()
					dump = strings.Join(l, "")
				}
				for _, plain := range []string{"double charge", "CARD_1", "It was Monday", "Refund", "line a"} {
					if strings.Contains(dump, plain) {
						t.Errorf("%s holds %q in clear", k, plain)
					}
				}
			}
		})
	}
}

// scan lists the keys matching pattern, on every master of a cluster.
func scan(ctx context.Context, c redis.UniversalClient, pattern string) ([]string, error) {
	var out []string
	each := func(ctx context.Context, n *redis.Client) error {
		it := n.Scan(ctx, 0, pattern, 1000).Iterator()
		for it.Next(ctx) {
			out = append(out, it.Val())
		}
		return it.Err()
	}
	if cc, ok := c.(*redis.ClusterClient); ok {
		var mu sync.Mutex
		return out, cc.ForEachMaster(ctx, func(ctx context.Context, n *redis.Client) error {
			mu.Lock()
			defer mu.Unlock()
			return each(ctx, n)
		})
	}
	return out, each(ctx, c.(*redis.Client))
}
