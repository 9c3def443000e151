package testkit

import (
	"context"
	"testing"
	"time"

	"github.com/convengine/engine/internal/proc"
	"github.com/jackc/pgx/v5/pgconn"
)

// TestPostgresRestart starts a server, stops it and starts it again on the same port, where
// what was written before is still there; nothing is left running once it is removed.
func TestPostgresRestart(t *testing.T) {
	t.Cleanup(func() { proc.NoChildren(t, "postgres") }) // runs after the server's removal
	s := StartPostgresT(t)
	url := s.NewDatabase(t)
	exec := func(sql string) (string, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		c, err := pgconn.Connect(ctx, url)
		if err != nil {
			return "", err
		}
		defer c.Close(ctx)
		rs, err := c.Exec(ctx, sql).ReadAll()
		if err != nil || len(rs) == 0 || len(rs[len(rs)-1].Rows) == 0 {
			return "", err
		}
		return string(rs[len(rs)-1].Rows[0][0]), nil
	}
	if _, err := exec("CREATE TABLE kept (v text); INSERT INTO kept VALUES ('before')"); err != nil {
		t.Fatal(err)
	}
	s.Stop()
	if _, err := exec("SELECT 1"); err == nil {
		t.Fatal("a stopped server answered")
	}
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	if v, err := exec("SELECT v FROM kept"); err != nil || v != "before" {
		t.Fatalf("after the restart: %q, %v; want before", v, err)
	}
}
