package record_test

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"strings"
	"testing"

	"github.com/convengine/engine/record"
)

// tampered is a fixture whose store holds ann's conversation c1 (seq 1-3 turns, 4 action,
// 5 outcome, 6 action, 7 outcome) and bob's c2, covered by a checkpoint.
func tampered(t *testing.T) (*fixture, string) {
	f := newFixture(t, nil)
	f.conversation(t, "ann", "c1", 3)
	f.conversation(t, "bob", "c2", 1)
	if _, err := f.rec.Checkpoint(context.Background()); err != nil {
		t.Fatal(err)
	}
	if rep := f.verify(t); !rep.OK() {
		t.Fatalf("before tampering: %v", rep.Err())
	}
	return f, record.ChainID("bank", "live", "ann", "c1")
}

func exec(t *testing.T, db *sql.DB, q string, args ...any) {
	t.Helper()
	if _, err := db.Exec(q, args...); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
}

// flip changes one byte of a column of one entry.
func flip(t *testing.T, db *sql.DB, chain string, seq int, col string) {
	t.Helper()
	var v any
	if err := db.QueryRow(`SELECT `+col+` FROM record_entries WHERE chain = ? AND seq = ?`, chain, seq).Scan(&v); err != nil {
		t.Fatal(err)
	}
	switch x := v.(type) {
	case []byte:
		x = bytes.Clone(x)
		x[len(x)/2] ^= 1
		v = x
	case string:
		b := []byte(x)
		i := len(b) / 2
		if b[i] == '9' || b[i] == 'z' {
			b[i]--
		} else {
			b[i]++
		}
		v = string(b)
	default:
		t.Fatalf("column %s holds a %T", col, v)
	}
	exec(t, db, `UPDATE record_entries SET `+col+` = ? WHERE chain = ? AND seq = ?`, v, chain, seq)
}

func wantProblem(t *testing.T, rep *record.Report, what record.Breakage, chain string, seq int64) {
	t.Helper()
	if rep.OK() {
		t.Fatalf("Verify found nothing; want %s at %s seq %d", what, chain, seq)
	}
	p := rep.Problems[0]
	if p.What != what || p.Chain != chain || p.Seq != seq {
		t.Fatalf("Verify's first problem is %v; want %s at seq %d (all: %v)", p, what, seq, rep.Problems)
	}
	if chain != "" && what != record.ConversationRemoved && (p.Tenant != "bank" || p.Conversation == "") {
		t.Fatalf("the problem does not name its conversation: %v", p)
	}
	t.Logf("%v", rep.Err())
}

func TestVerifyFindsEveryByteChanged(t *testing.T) {
	cols := []struct {
		col  string
		seq  int
		what record.Breakage
	}{
		{"id", 2, record.Altered},
		{"kind", 2, record.Altered},
		{"at", 2, record.Altered},
		{"tenant", 2, record.Altered},
		{"environment", 2, record.Altered},
		{"user_id", 2, record.Altered},
		{"session_id", 2, record.Altered},
		{"conversation_id", 2, record.Altered},
		{"turn_id", 2, record.Altered},
		{"request_id", 2, record.Altered},
		{"prev", 2, record.Altered},
		{"hash", 2, record.Altered},
		{"personal", 2, record.Altered},
		{"personal_hash", 2, record.Altered},
		{"evidence", 4, record.Altered},
		{"evidence_hash", 4, record.Altered},
		{"evidence", 5, record.Altered},
		{"hash", 7, record.Altered},
	}
	for _, c := range cols {
		t.Run(fmt.Sprint(c.col, "@", c.seq), func(t *testing.T) {
			f, chain := tampered(t)
			flip(t, f.store.DB(), chain, c.seq, c.col)
			wantProblem(t, f.verify(t), c.what, chain, int64(c.seq))
		})
	}
	t.Run("seq", func(t *testing.T) {
		f, chain := tampered(t)
		exec(t, f.store.DB(), `UPDATE record_entries SET seq = 40 WHERE chain = ? AND seq = 3`, chain)
		wantProblem(t, f.verify(t), record.Removed, chain, 3)
	})
	t.Run("chain", func(t *testing.T) {
		f, chain := tampered(t)
		flip(t, f.store.DB(), chain, 3, "chain")
		wantProblem(t, f.verify(t), record.Removed, chain, 3)
	})
}

func TestVerifyFindsRemovedAndReorderedEntries(t *testing.T) {
	t.Run("one removed", func(t *testing.T) {
		f, chain := tampered(t)
		exec(t, f.store.DB(), `DELETE FROM record_entries WHERE chain = ? AND seq = 2`, chain)
		wantProblem(t, f.verify(t), record.Removed, chain, 2)
	})
	t.Run("one removed and the rest renumbered", func(t *testing.T) {
		f, chain := tampered(t)
		db := f.store.DB()
		exec(t, db, `DELETE FROM record_entries WHERE chain = ? AND seq = 2`, chain)
		exec(t, db, `UPDATE record_entries SET seq = -seq WHERE chain = ? AND seq > 2`, chain)
		exec(t, db, `UPDATE record_entries SET seq = -seq - 1 WHERE chain = ? AND seq < 0`, chain)
		exec(t, db, `UPDATE record_chains SET head_seq = 6 WHERE chain = ?`, chain)
		wantProblem(t, f.verify(t), record.Removed, chain, 2)
	})
	t.Run("two reordered", func(t *testing.T) {
		f, chain := tampered(t)
		db := f.store.DB()
		exec(t, db, `UPDATE record_entries SET seq = -1 WHERE chain = ? AND seq = 2`, chain)
		exec(t, db, `UPDATE record_entries SET seq = 2 WHERE chain = ? AND seq = 3`, chain)
		exec(t, db, `UPDATE record_entries SET seq = 3 WHERE chain = ? AND seq = -1`, chain)
		wantProblem(t, f.verify(t), record.Reordered, chain, 2)
	})
	t.Run("the last removed, its head moved back", func(t *testing.T) {
		f, chain := tampered(t)
		db := f.store.DB()
		var prev []byte
		if err := db.QueryRow(`SELECT hash FROM record_entries WHERE chain = ? AND seq = 6`, chain).Scan(&prev); err != nil {
			t.Fatal(err)
		}
		exec(t, db, `DELETE FROM record_entries WHERE chain = ? AND seq = 7`, chain)
		exec(t, db, `UPDATE record_chains SET head_seq = 6, head_hash = ?, covered_seq = 6 WHERE chain = ?`, prev, chain)
		wantProblem(t, f.verify(t), record.Removed, chain, 7)
	})
	t.Run("an entry inserted", func(t *testing.T) {
		f, chain := tampered(t)
		db := f.store.DB()
		exec(t, db, `UPDATE record_entries SET seq = -seq WHERE chain = ? AND seq >= 3`, chain)
		exec(t, db, `UPDATE record_entries SET seq = -seq + 1 WHERE chain = ? AND seq < 0`, chain)
		exec(t, db, `INSERT INTO record_entries SELECT 'forged', chain, 3, kind, at, tenant, environment, user_id, session_id, conversation_id,
			turn_id, request_id, prev, hash, personal, personal_hash, evidence, evidence_hash FROM record_entries WHERE chain = ? AND seq = 2`, chain)
		rep := f.verify(t)
		if rep.OK() {
			t.Fatal("an inserted entry was not found")
		}
		t.Logf("%v", rep.Problems)
		if p := rep.Problems[0]; p.Chain != chain || p.Seq != 3 {
			t.Fatalf("first problem %v, want seq 3", p)
		}
	})
	t.Run("a conversation removed", func(t *testing.T) {
		f, chain := tampered(t)
		db := f.store.DB()
		exec(t, db, `DELETE FROM record_entries WHERE chain = ?`, chain)
		exec(t, db, `DELETE FROM record_chains WHERE chain = ?`, chain)
		wantProblem(t, f.verify(t), record.ConversationRemoved, chain, 7)
	})
	t.Run("a conversation pruned is not removed", func(t *testing.T) {
		f, chain := tampered(t)
		n, err := f.rec.Sweep(context.Background(), "bank", record.Retention{Days: 1, ActionDays: 1})
		if err != nil || n != 2 {
			t.Fatalf("Sweep: %d %v", n, err)
		}
		rep := f.verify(t)
		if !rep.OK() || rep.Prunes != 2 {
			t.Fatalf("after a prune: %v, %d prunes", rep.Problems, rep.Prunes)
		}
		// A forged statement does not cover a removal.
		exec(t, f.store.DB(), `UPDATE record_prunes SET through_seq = 1 WHERE chain = ?`, chain)
		if rep := f.verify(t); rep.OK() || !strings.Contains(rep.Err().Error(), "statement") {
			t.Fatalf("a forged prune statement: %v", rep.Problems)
		}
	})
}

func TestVerifyFindsCheckpointsChanged(t *testing.T) {
	twoCheckpoints := func(t *testing.T) *fixture {
		f, _ := tampered(t)
		f.conversation(t, "cy", "c3", 1)
		if _, err := f.rec.Checkpoint(context.Background()); err != nil {
			t.Fatal(err)
		}
		return f
	}
	for _, tt := range []struct {
		name, sql string
		what      record.Breakage
		cp        int64
	}{
		{"the first removed", `DELETE FROM record_checkpoints WHERE seq = 1`, record.CheckpointRemoved, 1},
		{"its root edited", `UPDATE record_checkpoints SET root = zeroblob(32) WHERE seq = 1`, record.CheckpointAltered, 1},
		{"its time edited", `UPDATE record_checkpoints SET at = '2020-01-01T00:00:00.000000000Z' WHERE seq = 2`, record.CheckpointAltered, 2},
		{"a leaf removed", `DELETE FROM record_checkpoint_heads WHERE checkpoint_seq = 1 AND leaf_index = 0`, record.CheckpointAltered, 1},
		{"a leaf edited", `UPDATE record_checkpoint_heads SET head_seq = 2 WHERE checkpoint_seq = 2`, record.CheckpointAltered, 2},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := twoCheckpoints(t)
			exec(t, f.store.DB(), tt.sql)
			rep := f.verify(t)
			if rep.OK() {
				t.Fatal("Verify found nothing")
			}
			if p := rep.Problems[0]; p.What != tt.what || p.Checkpoint != tt.cp {
				t.Fatalf("first problem %v, want %s of checkpoint %d", p, tt.what, tt.cp)
			}
			t.Logf("%v", rep.Err())
		})
	}
	t.Run("the last removed", func(t *testing.T) {
		f := twoCheckpoints(t)
		exec(t, f.store.DB(), `DELETE FROM record_checkpoints WHERE seq = 2`)
		exec(t, f.store.DB(), `DELETE FROM record_checkpoint_heads WHERE checkpoint_seq = 2`)
		rep := f.verify(t)
		if rep.OK() || rep.Problems[0].What != record.CheckpointRemoved {
			t.Fatalf("removing the newest checkpoint: %v", rep.Problems)
		}
		t.Logf("%v", rep.Err())
	})
}

func TestVerifyExportFindsHandEdits(t *testing.T) {
	f, _ := tampered(t)
	exp := f.export(t, "ann")
	lines := bytes.SplitAfter(exp, []byte("\n"))
	lines = lines[:len(lines)-1] // the empty string after the last newline
	edit := func(i int, from, to string) []byte {
		out := bytes.Clone(exp)
		l := bytes.Replace(lines[i], []byte(from), []byte(to), 1)
		if bytes.Equal(l, lines[i]) {
			t.Fatalf("line %d has no %q: %s", i, from, lines[i])
		}
		return bytes.Join(append(append(append([][]byte{}, lines[:i]...), l), lines[i+1:]...), nil)[:len(out)-len(lines[i])+len(l)]
	}
	without := func(i int) []byte {
		return bytes.Join(append(append([][]byte{}, lines[:i]...), lines[i+1:]...), nil)
	}
	find := func(s string) int {
		for i, l := range lines {
			if bytes.Contains(l, []byte(s)) {
				return i
			}
		}
		t.Fatalf("no line holds %q", s)
		return 0
	}
	cases := map[string][]byte{
		"a user's words":        edit(find("ann says 1"), "ann says 1", "ann says 7"),
		"what they were told":   edit(find("answer 2"), "answer 2", "answer 3"),
		"an outcome":            edit(find("insufficient funds"), "declined", "ok"),
		"an entry's time":       edit(find("ann says 0"), "T10:00:00Z", "T10:00:01Z"),
		"an entry removed":      without(find("ann says 1")),
		"the last entry gone":   without(len(lines) - 2),
		"a proof removed":       without(find(`"type":"proof"`)),
		"the end removed":       without(len(lines) - 1),
		"the end's count":       edit(len(lines)-1, `"entries":7`, `"entries":6`),
		"a proof's checkpoint":  edit(find(`"type":"proof"`), `"size":2`, `"size":3`),
		"a line of another key": edit(0, `"v":1`, `"v":1,"x":1`),
	}
	for name, b := range cases {
		t.Run(name, func(t *testing.T) {
			rep, err := record.VerifyExport(bytes.NewReader(b), f.pub)
			if err == nil && rep.OK() {
				t.Fatal("an edited export verified")
			}
			t.Logf("%v %v", err, rep.Problems)
		})
	}
	t.Run("a line of 17 MiB", func(t *testing.T) {
		b := append(bytes.Clone(lines[0]), []byte(`{"type":"entry","x":"`+strings.Repeat("a", 17<<20)+"\"}\n")...)
		_, err := record.VerifyExport(bytes.NewReader(b), f.pub)
		if err == nil || !strings.Contains(err.Error(), "longer than") {
			t.Fatalf("a 17 MiB line: %v", err)
		}
	})
}
