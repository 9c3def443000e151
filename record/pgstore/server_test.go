package pgstore_test

import (
	"context"
	"flag"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/convengine/engine/internal/proc"
	"github.com/convengine/engine/internal/testkit"
	"github.com/convengine/engine/record"
	"github.com/convengine/engine/record/pgstore"
	"github.com/convengine/engine/record/recordtest"
	"go.uber.org/goleak"
)

// server is the PostgreSQL server the tests share, each in a database of its own; the fault
// test starts one of its own, since it stops it.
var server *testkit.PostgresServer

func TestMain(m *testing.M) {
	flag.Parse()
	if testing.Short() {
		os.Exit(m.Run())
	}
	var err error
	server, err = testkit.StartPostgres()
	code := 1
	if err != nil {
		fmt.Fprintln(os.Stderr, "pgstore: the tests run a real PostgreSQL server (install the Debian package postgresql: apt-get install postgresql):", err)
	} else {
		code = m.Run()
		server.Remove()
	}
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "pgstore: leaked goroutines:", err)
			code = 1
		}
		proc.NoChildren(stderrT{&code}, "postgres")
	}
	os.Exit(code)
}

// stderrT reports NoChildren's findings outside any test.
type stderrT struct{ code *int }

func (stderrT) Helper() {}
func (t stderrT) Errorf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "pgstore: "+format+"\n", args...)
	*t.code = 1
}

// database returns the URL of a fresh database of the shared server.
func database(t testing.TB) string {
	t.Helper()
	testkit.PostgresAvailable(t)
	return server.NewDatabase(t)
}

// open opens a Store on url, closed when t ends.
func open(t testing.TB, url string) *pgstore.Store {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := pgstore.Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestConformance(t *testing.T) {
	recordtest.Run(t, func(t *testing.T) record.Store { return open(t, database(t)) })
}
