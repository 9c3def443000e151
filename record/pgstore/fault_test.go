package pgstore_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/convengine/engine/internal/testkit"
	"github.com/convengine/engine/record"
	"github.com/convengine/engine/record/pgstore"
)

// TestUnavailable stops the server under a Store: its errors say the database is unavailable
// (so that the Recorder retries), and once the server is back the same Store appends again.
func TestUnavailable(t *testing.T) {
	pg := testkit.StartPostgresT(t)
	s := open(t, pg.NewDatabase(t))
	ctx := context.Background()
	c := chainOf("outage")
	if _, err := s.Append(ctx, c, []record.Entry{entry(c, "before")}, link); err != nil {
		t.Fatal(err)
	}
	pg.Stop()
	for i, call := range []func(ctx context.Context) error{
		func(ctx context.Context) error {
			_, err := s.Append(ctx, c, []record.Entry{entry(c, "during")}, link)
			return err
		},
		func(ctx context.Context) error { _, err := s.Chain(ctx, c.ID); return err },
		func(ctx context.Context) error { _, err := s.Key(ctx, "t", "u"); return err },
	} {
		ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		err := call(ctx)
		cancel()
		if !errors.Is(err, pgstore.ErrUnavailable) {
			t.Errorf("call %d while the server is down: %v, want ErrUnavailable", i, err)
		}
	}
	if err := pg.Start(); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		e := entry(c, fmt.Sprintf("after-%d", i))
		if _, err := s.Append(ctx, c, []record.Entry{e}, link); err != nil {
			t.Fatalf("after the restart: %v", err)
		}
	}
	intact(t, s, c, 4)
}
