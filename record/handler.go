package record

import (
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/convengine/engine"
)

// The admin handler's bounds: every query parameter comes from outside.
const (
	maxListLimit = 500
	maxRange     = 366 * 24 * time.Hour
	maxParam     = 512
)

// Handler is the operator's reading of the record, an http.Handler the host mounts behind its
// own admin authentication (it checks none), at the root of its paths:
//
//	GET /records/conversations?tenant=T[&user=U][&from=RFC3339&to=RFC3339][&limit=N][&after=CURSOR]
//	    a tenant's or a user's conversations by time, {"conversations": [...], "next": CURSOR}
//	GET /records/conversations/{chain}?[after=SEQ][&limit=N]
//	    one conversation's entries, opened where the keys exist, {"chain": {...}, "entries": [...], "next": SEQ}
//	GET /records/export?tenant=T&user=U[&conversation=C]
//	    a user's export as JSON lines (application/jsonl), which VerifyExport checks
//	GET /records/public-key
//	    the checkpoint public keys as PEM, the current first
//
// Bad input is answered with RFC 9457 problems. Nothing it reads is logged.
func (r *Recorder) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /records/conversations", r.listConversations)
	mux.HandleFunc("GET /records/conversations/{chain}", r.conversation)
	mux.HandleFunc("GET /records/export", r.export)
	mux.HandleFunc("GET /records/public-key", r.publicKey)
	return mux
}

func invalid(w http.ResponseWriter, field, detail string) {
	p := engine.NewProblem(http.StatusBadRequest, engine.CodeInvalidRequest, detail)
	p.Field = field
	engine.WriteProblem(w, p)
}

// param reads a query parameter once, bounded.
func param(w http.ResponseWriter, req *http.Request, name string, required bool) (string, bool) {
	vs := req.URL.Query()[name]
	switch {
	case len(vs) > 1:
		invalid(w, name, name+" is given more than once")
		return "", false
	case len(vs) == 0 || vs[0] == "":
		if required {
			invalid(w, name, name+" is required")
			return "", false
		}
		return "", true
	case len(vs[0]) > maxParam:
		invalid(w, name, fmt.Sprintf("%s is longer than %d bytes", name, maxParam))
		return "", false
	}
	return vs[0], true
}

func limitParam(w http.ResponseWriter, req *http.Request, def int) (int, bool) {
	s, ok := param(w, req, "limit", false)
	if !ok || s == "" {
		return def, ok
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 || n > maxListLimit {
		invalid(w, "limit", fmt.Sprintf("limit is a number from 1 to %d", maxListLimit))
		return 0, false
	}
	return n, true
}

func timeParam(w http.ResponseWriter, req *http.Request, name string) (time.Time, bool) {
	s, ok := param(w, req, name, false)
	if !ok || s == "" {
		return time.Time{}, ok
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil || t.Year() < 1970 || t.Year() > 9999 {
		invalid(w, name, name+" is an RFC 3339 time")
		return time.Time{}, false
	}
	return t, true
}

type conversationOut struct {
	Chain        string    `json:"chain"`
	Tenant       string    `json:"tenant"`
	Environment  string    `json:"environment"`
	User         string    `json:"user"`
	Conversation string    `json:"conversation"`
	Entries      int64     `json:"entries"`
	FirstAt      time.Time `json:"firstAt"`
	LastAt       time.Time `json:"lastAt"`
	CoveredSeq   int64     `json:"coveredSeq"`
}

func chainOut(c *Chain) conversationOut {
	return conversationOut{Chain: c.ID, Tenant: c.Tenant, Environment: c.Environment, User: c.User, Conversation: c.Conversation,
		Entries: c.Head.Seq, FirstAt: c.FirstAt, LastAt: c.LastAt, CoveredSeq: c.CoveredSeq}
}

func (r *Recorder) listConversations(w http.ResponseWriter, req *http.Request) {
	tenant, ok := param(w, req, "tenant", true)
	if !ok {
		return
	}
	user, ok := param(w, req, "user", false)
	if !ok {
		return
	}
	from, ok := timeParam(w, req, "from")
	if !ok {
		return
	}
	to, ok := timeParam(w, req, "to")
	if !ok {
		return
	}
	if !from.IsZero() && !to.IsZero() && (!to.After(from) || to.Sub(from) > maxRange) {
		invalid(w, "to", "to is after from, by at most 366 days")
		return
	}
	limit, ok := limitParam(w, req, 50)
	if !ok {
		return
	}
	q := ChainQuery{Tenant: tenant, User: user, From: from, To: to, Limit: limit}
	after, ok := param(w, req, "after", false)
	if !ok {
		return
	}
	if after != "" {
		if q.AfterAt, q.AfterID, ok = parseCursor(after); !ok {
			invalid(w, "after", "after is the next cursor of a previous page")
			return
		}
	}
	cs, err := r.store.Chains(req.Context(), q)
	if err != nil {
		r.storeFailed(w, req, err)
		return
	}
	out := struct {
		Conversations []conversationOut `json:"conversations"`
		Next          string            `json:"next,omitempty"`
	}{Conversations: make([]conversationOut, len(cs))}
	for i := range cs {
		out.Conversations[i] = chainOut(&cs[i])
	}
	if len(cs) == limit {
		last := cs[len(cs)-1]
		out.Next = base64.RawURLEncoding.EncodeToString([]byte(last.FirstAt.UTC().Format(time.RFC3339Nano) + " " + last.ID))
	}
	writeJSON(w, out)
}

func parseCursor(s string) (time.Time, string, bool) {
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return time.Time{}, "", false
	}
	at, id, ok := strings.Cut(string(b), " ")
	t, err := time.Parse(time.RFC3339Nano, at)
	if !ok || err != nil || !isChainID(id) {
		return time.Time{}, "", false
	}
	return t, id, true
}

func isChainID(s string) bool {
	b, err := hex.DecodeString(s)
	return err == nil && len(b) == HashSize && strings.ToLower(s) == s
}

func (r *Recorder) conversation(w http.ResponseWriter, req *http.Request) {
	id := req.PathValue("chain")
	if !isChainID(id) {
		invalid(w, "chain", "chain is a conversation's chain id: 64 lowercase hex digits")
		return
	}
	limit, ok := limitParam(w, req, 100)
	if !ok {
		return
	}
	var after int64
	if s, ok := param(w, req, "after", false); !ok {
		return
	} else if s != "" {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || n < 0 {
			invalid(w, "after", "after is a seq")
			return
		}
		after = n
	}
	ctx := req.Context()
	c, err := r.store.Chain(ctx, id)
	if errors.Is(err, ErrNotFound) {
		engine.WriteProblem(w, engine.NewProblem(http.StatusNotFound, engine.CodeNotFound, "no conversation has this chain id"))
		return
	}
	if err != nil {
		r.storeFailed(w, req, err)
		return
	}
	es, err := r.store.Entries(ctx, id, after, limit)
	if err != nil {
		r.storeFailed(w, req, err)
		return
	}
	personal, erased, err := r.readKey(ctx, c.Tenant, c.User)
	if err != nil {
		r.storeFailed(w, req, err)
		return
	}
	out := struct {
		Chain   conversationOut `json:"chain"`
		Entries []ExportedEntry `json:"entries"`
		Next    int64           `json:"next,omitempty"`
	}{Chain: chainOut(&c), Entries: make([]ExportedEntry, len(es))}
	for i := range es {
		out.Entries[i] = r.opened(&es[i], personal, erased)
	}
	if len(es) == limit {
		out.Next = es[len(es)-1].Seq
	}
	writeJSON(w, out)
}

func (r *Recorder) export(w http.ResponseWriter, req *http.Request) {
	tenant, ok := param(w, req, "tenant", true)
	if !ok {
		return
	}
	user, ok := param(w, req, "user", true)
	if !ok {
		return
	}
	conv, ok := param(w, req, "conversation", false)
	if !ok {
		return
	}
	cw := &countingWriter{w: w, h: w.Header()}
	if err := r.Export(req.Context(), cw, ExportQuery{Tenant: tenant, User: user, Conversation: conv}); err != nil {
		if cw.n == 0 {
			r.storeFailed(w, req, err)
			return
		}
		// The status is sent: the missing end line tells the reader that the export was cut.
		r.log.ErrorContext(req.Context(), "record: an export failed", "tenant", tenant, "err", err)
	}
}

// countingWriter sets the export's headers at its first byte, so that an export that fails
// before any is answered with a problem.
type countingWriter struct {
	w http.ResponseWriter
	h http.Header
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	if c.n == 0 {
		c.h.Set("Content-Type", "application/jsonl")
		c.h.Set("Content-Disposition", `attachment; filename="record-export.jsonl"`)
		c.h.Set("Cache-Control", "no-store")
	}
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

func (r *Recorder) publicKey(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/x-pem-file")
	for _, k := range r.keys.publicKeys() {
		w.Write(encodePEM(k))
	}
}

func (r *Recorder) storeFailed(w http.ResponseWriter, req *http.Request, err error) {
	r.log.ErrorContext(req.Context(), "record: reading the record failed", "err", err)
	p := engine.NewProblem(http.StatusServiceUnavailable, engine.CodeStoreUnavailable, "the record cannot be read right now; try again")
	p.Retryable = true
	engine.WriteProblem(w, p)
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	json.NewEncoder(w).Encode(v)
}
