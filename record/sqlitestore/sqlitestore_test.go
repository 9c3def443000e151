package sqlitestore_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/convengine/engine/record"
	"github.com/convengine/engine/record/recordtest"
	"github.com/convengine/engine/record/sqlitestore"
)

func open(t *testing.T) record.Store {
	s, err := sqlitestore.Open(context.Background(), filepath.Join(t.TempDir(), "record.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestConformance(t *testing.T) { recordtest.Run(t, open) }

func TestOpenMakesAPrivateFileAndMigratesOnce(t *testing.T) {
	file := filepath.Join(t.TempDir(), "record.db")
	for range 2 {
		s, err := sqlitestore.Open(context.Background(), file, nil)
		if err != nil {
			t.Fatal(err)
		}
		var n int
		if err := s.DB().QueryRow(`SELECT count(*) FROM record_migrations`).Scan(&n); err != nil || n != 1 {
			t.Fatalf("record_migrations has %d rows, %v", n, err)
		}
		var mode string
		if err := s.DB().QueryRow(`PRAGMA journal_mode`).Scan(&mode); err != nil || mode != "wal" {
			t.Fatalf("journal mode %q, %v", mode, err)
		}
		s.Close()
	}
	fi, err := os.Stat(file)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Fatalf("the database's mode is %v, want 0600", fi.Mode().Perm())
	}
}
