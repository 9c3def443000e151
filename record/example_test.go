package record_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"fmt"
	"io"
	"log"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/convengine/engine"
	"github.com/convengine/engine/enginetest"
	"github.com/convengine/engine/record"
	"github.com/convengine/engine/record/sqlitestore"
)

// A host keeps the record of its engine's conversations in SQLite (record/pgstore for
// replicas), verifies it, and exports a user's conversations for an access request.
func ExampleNew() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "record-example")
	defer os.RemoveAll(dir)
	signingKey := bytes.Repeat([]byte("k"), 32) // the engine's key: 32 random bytes, kept secret

	store, err := sqlitestore.Open(ctx, filepath.Join(dir, "records.db"), nil)
	if err != nil {
		log.Fatal(err)
	}
	defer store.Close()
	rec, err := record.New(store, &record.Options{Key: signingKey})
	if err != nil {
		log.Fatal(err)
	}
	tenants, _ := engine.NewStaticTenants(&engine.Tenant{Key: "pk_example", Name: "Example",
		Environments: map[string]*engine.Environment{engine.EnvProduction: {BackendURL: "https://api.example.com"}}})
	eng, err := engine.New(engine.Config{
		Tenants:    tenants,
		Model:      &enginetest.ScriptedModel{Steps: [][]engine.ModelEvent{enginetest.Text("Hello ", "there.")}},
		SigningKey: signingKey,
		Recorder:   rec,
		Logger:     slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	if err != nil {
		log.Fatal(err)
	}
	caller := &engine.Caller{EngineKey: "pk_example", UserToken: "the-user's-token", UserID: "customer-42"}
	for _, err := range eng.Turn(ctx, caller, &engine.TurnInput{Transcript: "hi"}) {
		if err != nil {
			log.Fatal(err)
		}
	}
	eng.Close()
	// Close writes what is queued and a last checkpoint that covers it.
	if err := rec.Close(ctx); err != nil {
		log.Fatal(err)
	}

	public, _ := record.PublicKey(signingKey) // or record.ParsePublicKeys of the published PEM
	report, err := record.Verify(ctx, store, []ed25519.PublicKey{public})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("intact:", report.OK(), "entries:", report.Entries, "uncovered:", report.Uncovered)

	reader, _ := record.New(store, &record.Options{Key: signingKey})
	defer reader.Close(ctx)
	var export strings.Builder
	if err := reader.Export(ctx, &export, record.ExportQuery{Tenant: "pk_example", User: "customer-42"}); err != nil {
		log.Fatal(err)
	}
	offline, _ := record.VerifyExport(strings.NewReader(export.String()), []ed25519.PublicKey{public})
	fmt.Println("export intact:", offline.OK(), "holds the answer:", strings.Contains(export.String(), "Hello there."))
	// Output:
	// intact: true entries: 1 uncovered: 0
	// export intact: true holds the answer: true
}
