package record

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/convengine/engine/internal/jsonenc"
)

// ChainID is the id of a conversation's chain: the lowercase hex of
// SHA-256(tenant "\x00" environment "\x00" user "\x00" conversation).
func ChainID(tenant, environment, user, conversation string) string {
	h := sha256.New()
	for i, s := range []string{tenant, environment, user, conversation} {
		if i > 0 {
			h.Write([]byte{0})
		}
		h.Write([]byte(s))
	}
	return hex.EncodeToString(h.Sum(nil))
}

// Header is what an entry's hash commits to, as JSON: the entry's hash is the SHA-256 of the
// RFC 8785 canonical form of this object. Personal and Evidence are the hex SHA-256 of the
// sealed contents ("" when none), so that the contents can be destroyed while the chain holds.
type Header struct {
	V            int    `json:"v"`
	ID           string `json:"id"`
	Chain        string `json:"chain"`
	Seq          int64  `json:"seq"`
	Kind         Kind   `json:"kind"`
	At           string `json:"at"`
	Tenant       string `json:"tenant"`
	Environment  string `json:"environment"`
	User         string `json:"user"`
	Session      string `json:"session"`
	Conversation string `json:"conversation"`
	Turn         string `json:"turn"`
	Request      string `json:"request"`
	Prev         string `json:"prev"`
	Personal     string `json:"personal"`
	Evidence     string `json:"evidence"`
}

// HeaderOf is e's header.
func HeaderOf(e *Entry) Header {
	return Header{V: 1, ID: e.ID, Chain: e.Chain, Seq: e.Seq, Kind: e.Kind, At: e.At.UTC().Format(time.RFC3339Nano),
		Tenant: e.Tenant, Environment: e.Environment, User: e.User, Session: e.Session, Conversation: e.Conversation,
		Turn: e.Turn, Request: e.Request, Prev: hex.EncodeToString(e.Prev),
		Personal: hex.EncodeToString(e.PersonalHash), Evidence: hex.EncodeToString(e.EvidenceHash)}
}

// Hash is the entry hash of h: SHA-256 of its canonical JSON.
func (h *Header) Hash() []byte {
	s := sha256.Sum256(h.canonical())
	return s[:]
}

// canonical is h's RFC 8785 form, written directly: its members in the order of their names,
// its strings escaped as RFC 8785 says (", \ and control characters only). Every entry is
// hashed when written and when verified, and parsing JSON again to canonicalise it cost more
// than the rest of a turn's record. A string that is not valid UTF-8 takes the general path.
func (h *Header) canonical() []byte {
	fields := [...]string{h.At, h.Chain, h.Conversation, h.Environment, h.Evidence, h.ID, string(h.Kind), h.Personal,
		h.Prev, h.Request, h.Session, h.Tenant, h.Turn, h.User}
	n := 256
	for _, f := range fields {
		if !utf8.ValidString(f) {
			return h.canonicalSlow()
		}
		n += len(f)
	}
	b := make([]byte, 0, n)
	str := func(name, v string) {
		b = append(b, '"')
		b = append(b, name...)
		b = append(b, `":`...)
		b, _ = jsonenc.AppendCanonString(b, v) // valid UTF-8, checked above
		b = append(b, ',')
	}
	b = append(b, '{')
	str("at", h.At)
	str("chain", h.Chain)
	str("conversation", h.Conversation)
	str("environment", h.Environment)
	str("evidence", h.Evidence)
	str("id", h.ID)
	str("kind", string(h.Kind))
	str("personal", h.Personal)
	str("prev", h.Prev)
	str("request", h.Request)
	b = append(b, `"seq":`...)
	b = strconv.AppendInt(b, h.Seq, 10)
	b = append(b, ',')
	str("session", h.Session)
	str("tenant", h.Tenant)
	str("turn", h.Turn)
	str("user", h.User)
	b = append(b, `"v":`...)
	b = strconv.AppendInt(b, int64(h.V), 10)
	return append(b, '}')
}

// canonicalSlow is h's RFC 8785 form by the general transform: the reference canonical
// follows, and the path of strings that are not valid UTF-8 (which encoding/json replaces).
func (h *Header) canonicalSlow() []byte {
	raw, err := json.Marshal(h)
	if err != nil {
		panic(err) // strings and integers always marshal
	}
	c, err := canonical(raw)
	if err != nil {
		panic(err)
	}
	return c
}

func canonical(raw []byte) ([]byte, error) {
	c, err := jsonenc.Canonicalize(raw)
	if err != nil {
		return nil, fmt.Errorf("canonicalising: %w", err)
	}
	return c, nil
}

func entryHash(e *Entry) []byte {
	h := HeaderOf(e)
	return h.Hash()
}

// linkEntries is the link callback of every append: it chains entries from the head.
func linkEntries(head Head, es []Entry) error {
	prev := head.Hash
	if len(prev) == 0 {
		prev = make([]byte, HashSize)
	}
	for i := range es {
		es[i].Seq = head.Seq + int64(i) + 1
		es[i].Prev = prev
		es[i].Hash = entryHash(&es[i])
		prev = es[i].Hash
	}
	return nil
}

// checkEntry says what is wrong with e on its own: its sealed contents against their hashes
// and its hash against its header. "" when nothing.
func checkEntry(e *Entry) string {
	if e.Personal != nil && !bytes.Equal(sum(e.Personal), e.PersonalHash) {
		return "its personal content does not match its hash"
	}
	if e.Evidence != nil && !bytes.Equal(sum(e.Evidence), e.EvidenceHash) {
		return "its evidence does not match its hash"
	}
	if !bytes.Equal(entryHash(e), e.Hash) {
		return "its hash does not match its header"
	}
	return ""
}

// microseconds is t as entries keep it: UTC, microsecond precision (PostgreSQL's), no
// monotonic reading, so that it reads back exactly as it was hashed.
func microseconds(t time.Time) time.Time { return t.UTC().Truncate(time.Microsecond).Round(0) }
