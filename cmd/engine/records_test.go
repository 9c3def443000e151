package main

import (
	"bytes"
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/convengine/engine/client"
	"github.com/convengine/engine/enginetest"
)

// serveUntil runs the reference server until the function it returns stops it, cleanly, as
// SIGTERM does.
func serveUntil(t *testing.T, env map[string]string) (base string, logs *lineWriter, stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	out := &lineWriter{re: regexp.MustCompile(`engine listening on (\S+)`), found: make(chan string, 1)}
	logs = &lineWriter{re: regexp.MustCompile(`^\b$`), found: make(chan string, 1)}
	done := make(chan error, 1)
	go func() { done <- run(ctx, []string{"-addr", "127.0.0.1:0", "-speech", "off"}, debugEnv(env), out, logs) }()
	stopped := false
	stop = func() {
		if stopped {
			return
		}
		stopped = true
		cancel()
		if err := <-done; err != nil {
			t.Errorf("run: %v", err)
		}
	}
	t.Cleanup(stop)
	select {
	case base = <-out.found:
	case err := <-done:
		t.Fatalf("run: %v", err)
	case <-time.After(20 * time.Second):
		t.Fatal("the server did not start")
	}
	return base, logs, stop
}

// records runs "engine records args..." and returns its exit code and output.
func records(t *testing.T, env map[string]string, stdin string, args ...string) (int, string) {
	t.Helper()
	var out, errs bytes.Buffer
	code := recordsCommand(t.Context(), args, func(k string) string { return env[k] }, strings.NewReader(stdin), &out, &errs)
	return code, out.String() + errs.String()
}

// TestTheReferenceServerKeepsTheRecord: the reference server with its default SQLite record
// and no ENGINE_SIGNING_KEY keeps a key beside the database; a user's transfer, a transfer the
// bank declined and a card number typed are recorded; after a clean stop the whole record
// verifies, every entry covered by a checkpoint; the user's export (named by their token on
// standard input) verifies offline against the published public key alone, holds their words
// and never the card number in clear; a byte changed in the database is named by verify;
// after erasure the words are gone and the record still verifies; a held user is not erased.
func TestTheReferenceServerKeepsTheRecord(t *testing.T) {
	dir := t.TempDir()
	env := map[string]string{"XDG_DATA_HOME": dir}
	db := filepath.Join(dir, "convengine", "records.db")
	base, logs, stop := serveUntil(t, env)
	const token = "record-user-token"
	c, err := client.New(base, &client.Options{EngineKey: "pk_demo", UserToken: client.StaticToken(token)})
	if err != nil {
		t.Fatal(err)
	}
	if res, err := transfer(t, c, "send 20 dollars to Alex"); err != nil || res.Done.Type != "success" {
		t.Fatalf("transfer: %+v %v", res, err)
	}
	if res, err := transfer(t, c, "send 5000 dollars to Sam"); err != nil || res.Done.Type != "error" {
		t.Fatalf("declined transfer: %+v %v", res, err)
	}
	stream, err := c.Turn(t.Context(), &client.TurnRequest{Transcript: "is my card 4111 1111 1111 1111 blocked"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := stream.Spec(); err != nil {
		t.Fatal(err)
	}
	stream.Close()
	stop()
	if !strings.Contains(logs.String(), "beside the record") {
		t.Error("the server did not say where it keeps the engine's key")
	}
	if st, err := os.Stat(db + ".key"); err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("the key beside the record: %v %v", st, err)
	}

	code, out := records(t, env, "", "verify")
	if code != 0 || !strings.Contains(out, "intact") || !strings.Contains(out, "0 entries not yet covered") {
		t.Fatalf("verify after a clean stop: %d\n%s", code, out)
	}
	code, export := records(t, env, token+"\n", "export", "-tenant", "pk_demo", "-token-stdin")
	if code != 0 || !strings.Contains(export, "send 20 dollars to Alex") || !strings.Contains(export, "insufficient_funds") {
		t.Fatalf("export: %d\n%.2000s", code, export)
	}
	if strings.Contains(export, "4111 1111 1111 1111") || strings.Contains(export, "4111111111111111") || strings.Contains(export, token) {
		t.Error("the export holds the card number in clear, or the user's token")
	}
	exportFile := filepath.Join(t.TempDir(), "export.jsonl")
	os.WriteFile(exportFile, []byte(export), 0o600)
	_, pem := records(t, env, "", "public-key")
	keyFile := filepath.Join(t.TempDir(), "record.pem")
	os.WriteFile(keyFile, []byte(pem), 0o600)
	// Offline: the export and the public key, nothing of the engine's.
	if code, out := records(t, map[string]string{}, "", "verify", "-public-key", keyFile, exportFile); code != 0 {
		t.Fatalf("offline verify of the export: %d\n%s", code, out)
	}
	edited := strings.Replace(export, "send 20 dollars", "send 10 dollars", 1)
	if code, out := records(t, map[string]string{}, edited, "verify", "-public-key", keyFile, "-"); code != 1 {
		t.Fatalf("an export edited by hand: %d\n%s", code, out)
	}

	var files []byte
	for _, suffix := range []string{"", "-wal"} {
		b, _ := os.ReadFile(db + suffix)
		files = append(files, b...)
	}
	enginetest.KeepArtifact(enginetest.ArtifactRecord, files)
	enginetest.KeepArtifact(enginetest.ArtifactRecord, []byte(export))

	// One byte of a stored entry, changed and put back.
	sqlDB, err := sql.Open("sqlite", db)
	if err != nil {
		t.Fatal(err)
	}
	defer sqlDB.Close()
	var id string
	var personal []byte
	if err := sqlDB.QueryRow(`SELECT id, personal FROM record_entries WHERE kind = 'turn' ORDER BY at LIMIT 1`).Scan(&id, &personal); err != nil {
		t.Fatal(err)
	}
	tampered := bytes.Clone(personal)
	tampered[len(tampered)/2] ^= 1
	if _, err := sqlDB.Exec(`UPDATE record_entries SET personal = ? WHERE id = ?`, tampered, id); err != nil {
		t.Fatal(err)
	}
	code, out = records(t, env, "", "verify")
	if code != 1 || !strings.Contains(out, "BROKEN") {
		t.Fatalf("verify of a changed byte: %d\n%s", code, out)
	}
	sqlDB.Exec(`UPDATE record_entries SET personal = ? WHERE id = ?`, personal, id)

	// Held, then erased.
	if code, out := records(t, env, token+"\n", "hold", "-tenant", "pk_demo", "-token-stdin"); code != 0 {
		t.Fatalf("hold: %d %s", code, out)
	}
	if code, out := records(t, env, token+"\n", "erase", "-tenant", "pk_demo", "-token-stdin"); code != 1 || !strings.Contains(out, "legal hold") {
		t.Fatalf("erase of a held user: %d %s", code, out)
	}
	records(t, env, token+"\n", "hold", "-tenant", "pk_demo", "-token-stdin", "-release")
	if code, out := records(t, env, token+"\n", "erase", "-tenant", "pk_demo", "-token-stdin"); code != 0 {
		t.Fatalf("erase: %d %s", code, out)
	}
	code, after := records(t, env, token+"\n", "export", "-tenant", "pk_demo", "-token-stdin")
	if code != 0 || strings.Contains(after, "send 20 dollars") || !strings.Contains(after, "insufficient_funds") {
		t.Fatalf("export after erasure holds the words, or lost the actions' evidence: %d\n%.2000s", code, after)
	}
	if code, out := records(t, env, "", "verify"); code != 0 {
		t.Fatalf("verify after erasure: %d\n%s", code, out)
	}
	if code, _ := records(t, env, "", "frobnicate"); code != 2 {
		t.Errorf("an unknown command: exit %d, want 2", code)
	}
}
