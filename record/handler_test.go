package record_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/convengine/engine/record"
)

func TestHandler(t *testing.T) {
	f := newFixture(t, nil)
	f.conversation(t, "ann", "c1", 2)
	srv := httptest.NewServer(f.rec.Handler())
	defer srv.Close()
	get := func(path string) (int, http.Header, []byte) {
		t.Helper()
		resp, err := srv.Client().Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, resp.Header, b
	}
	for _, bad := range []string{
		"/records/conversations",
		"/records/conversations?tenant=bank&limit=0",
		"/records/conversations?tenant=bank&limit=100000",
		"/records/conversations?tenant=bank&tenant=other",
		"/records/conversations?tenant=bank&from=yesterday",
		"/records/conversations?tenant=bank&from=2026-01-01T00:00:00Z&to=2020-01-01T00:00:00Z",
		"/records/conversations?tenant=bank&from=2020-01-01T00:00:00Z&to=2026-01-01T00:00:00Z",
		"/records/conversations?tenant=bank&after=garbage",
		"/records/conversations?tenant=" + strings.Repeat("a", 600),
		"/records/conversations/not-a-chain",
		"/records/conversations/" + record.ChainID("bank", "live", "ann", "c1") + "?after=-1",
		"/records/export?tenant=bank",
	} {
		status, h, body := get(bad)
		if status != http.StatusBadRequest || h.Get("Content-Type") != "application/problem+json" {
			t.Errorf("GET %s: %d %s %s, want a 400 problem", bad, status, h.Get("Content-Type"), body)
		}
	}
	status, _, body := get("/records/conversations?tenant=bank&user=ann&limit=1")
	var list struct {
		Conversations []struct{ Chain, Conversation string }
		Next          string
	}
	if err := json.Unmarshal(body, &list); status != 200 || err != nil || len(list.Conversations) != 1 || list.Conversations[0].Conversation != "c1" {
		t.Fatalf("list: %d %s", status, body)
	}
	if status, _, _ := get("/records/conversations?tenant=bank&after=" + list.Next); status != 200 {
		t.Fatalf("the next page: %d", status)
	}
	status, _, body = get("/records/conversations/" + list.Conversations[0].Chain)
	if status != 200 || !bytes.Contains(body, []byte("ann says 1")) || !bytes.Contains(body, []byte("Send 20 to Alex?")) {
		t.Fatalf("one conversation: %d %s", status, body)
	}
	if status, _, _ := get("/records/conversations/" + strings.Repeat("0", 64)); status != http.StatusNotFound {
		t.Fatalf("an unknown chain: %d", status)
	}
	status, h, body := get("/records/export?tenant=bank&user=ann")
	if status != 200 || h.Get("Content-Type") != "application/jsonl" {
		t.Fatalf("export: %d %s", status, h.Get("Content-Type"))
	}
	status, _, pemBytes := get("/records/public-key")
	keys, err := record.ParsePublicKeys(pemBytes)
	if status != 200 || err != nil {
		t.Fatalf("public key: %d %v", status, err)
	}
	if rep, err := record.VerifyExport(bytes.NewReader(body), keys); err != nil || !rep.OK() {
		t.Fatalf("the handler's export against the handler's key: %v %v", err, rep.Problems)
	}
}
