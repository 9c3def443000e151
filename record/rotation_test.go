package record_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"strings"
	"testing"

	"github.com/convengine/engine/record"
)

// TestAKeyRotated: the engine's key is rotated. With the old key among PreviousKeys, what was
// sealed and signed under it stays readable and verifiable, new entries use the new key, the
// whole record verifies against both public keys and not against the new one alone, and a
// recorder that has lost the old key can no longer read the users whose data keys it wrapped,
// and says so, though the record still verifies.
func TestAKeyRotated(t *testing.T) {
	old := testKey
	newKey := bytes.Repeat([]byte("n"), 32)
	f := newFixture(t, &record.Options{Key: old})
	f.conversation(t, "ann", "before", 2)
	f.close(t)

	f.open(t, &record.Options{Key: newKey, PreviousKeys: [][]byte{old}})
	f.conversation(t, "ann", "after", 2)
	if _, err := f.rec.Checkpoint(context.Background()); err != nil {
		t.Fatal(err)
	}
	export := f.export(t, "ann")
	for _, want := range []string{"ann says 0", "ann says 1", "answer 1"} {
		if c := bytes.Count(export, []byte(want)); c != 2 {
			t.Errorf("%q is in the export %d times, want 2 (once per conversation, old key and new)", want, c)
		}
	}
	oldPub, _ := record.PublicKey(old)
	newPub, _ := record.PublicKey(newKey)
	ctx := context.Background()
	if rep, err := record.Verify(ctx, f.store, []ed25519.PublicKey{newPub, oldPub}); err != nil || !rep.OK() {
		t.Fatalf("Verify with both keys: %v %v", err, rep.Err())
	}
	if rep, err := record.Verify(ctx, f.store, []ed25519.PublicKey{newPub}); err != nil || rep.OK() {
		t.Errorf("Verify with the new key alone found the old checkpoints intact: %v", err)
	}
	if rep, err := record.VerifyExport(bytes.NewReader(export), []ed25519.PublicKey{newPub, oldPub}); err != nil || !rep.OK() {
		t.Errorf("VerifyExport with both keys: %v %v", err, rep.Err())
	}
	f.close(t)

	// The old key forgotten: the users whose data keys it wrapped cannot be exported (the
	// error names the key), and the record still verifies.
	f.open(t, &record.Options{Key: newKey})
	var b bytes.Buffer
	err := f.rec.Export(ctx, &b, record.ExportQuery{Tenant: "bank", User: "ann"})
	if err == nil || !strings.Contains(err.Error(), record.KeyID(oldPub)[:8]) && !strings.Contains(err.Error(), "not among the recorder's keys") {
		t.Errorf("an export without the key that wrapped the user's data key: %v", err)
	}
	if bytes.Contains(b.Bytes(), []byte("ann says 0")) {
		t.Error("without the old key, the words sealed under it were read")
	}
	if rep, err := record.Verify(ctx, f.store, []ed25519.PublicKey{newPub, oldPub}); err != nil || !rep.OK() {
		t.Fatalf("Verify after the old key was dropped: %v %v", err, rep.Err())
	}
}
