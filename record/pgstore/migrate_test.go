package pgstore_test

import (
	"context"
	"path/filepath"
	"sync"
	"testing"

	"github.com/convengine/engine/record"
	"github.com/convengine/engine/record/pgstore"
	"github.com/jackc/pgx/v5"
)

// schema describes the record's tables, columns and indexes as the database has them.
func schema(t *testing.T, url string) (desc []string, migrations int) {
	t.Helper()
	ctx := context.Background()
	c, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	rows, _ := c.Query(ctx, `SELECT table_name || '.' || column_name || ' ' || data_type FROM information_schema.columns
		WHERE table_name LIKE 'record_%' UNION ALL SELECT indexdef FROM pg_indexes WHERE tablename LIKE 'record_%' ORDER BY 1`)
	if desc, err = pgx.CollectRows(rows, pgx.RowTo[string]); err != nil {
		t.Fatal(err)
	}
	if err := c.QueryRow(ctx, "SELECT count(*) FROM record_migrations").Scan(&migrations); err != nil {
		t.Fatal(err)
	}
	return desc, migrations
}

// TestMigrateAgain opens a database whose schema is up to date: nothing changes, and what was
// kept is still there.
func TestMigrateAgain(t *testing.T) {
	url := database(t)
	s := open(t, url)
	c := chainOf("kept")
	if _, err := s.Append(context.Background(), c, []record.Entry{entry(c, "e1")}, link); err != nil {
		t.Fatal(err)
	}
	s.Close()
	before, n := schema(t, url)
	if n == 0 || len(before) == 0 {
		t.Fatalf("after Open: %d migrations, schema %q", n, before)
	}
	s = open(t, url)
	after, m := schema(t, url)
	if m != n || len(after) != len(before) {
		t.Fatalf("opened again: %d migrations (was %d), %d columns and indexes (was %d)", m, n, len(after), len(before))
	}
	for i := range before {
		if before[i] != after[i] {
			t.Fatalf("opened again: %q became %q", before[i], after[i])
		}
	}
	intact(t, s, c, 1)
}

// TestOpenTogether opens a new database from several replicas at once: each migration is
// applied once, and every replica starts.
func TestOpenTogether(t *testing.T) {
	url := database(t)
	var wg sync.WaitGroup
	for range 6 {
		wg.Go(func() {
			s, err := pgstore.Open(context.Background(), url)
			if err != nil {
				t.Error(err)
				return
			}
			s.Close()
		})
	}
	wg.Wait()
	steps, _ := filepath.Glob("migrations/*.sql")
	if _, n := schema(t, url); n != len(steps) {
		t.Fatalf("%d migrations recorded, want %d", n, len(steps))
	}
}
