package redisstore

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/convengine/engine/handoff"
)

// Handoffs is a [handoff.Store] in Redis: the handoffs to a person of every replica that
// shares the server, so that any replica relays a handoff another started, and answers a
// contact centre about it. Make it with [Store.Handoffs]; it uses the Store's client, prefix,
// time-out and SealKey, which seals the handoffs' summaries, transcripts, messages and the
// conversations' latest lines. Its methods are safe for concurrent use.
//
// A conversation's handoffs share a hash tag, a hash of its tenant, user and conversation, so
// that what one call changes lands in one Redis Cluster slot:
//
//	engine:handoffid:{<id>}              the id's conversation tag
//	engine:handoff:<id>:{<tag>}          a handoff's state, {"v":1,"state":…}
//	engine:handoffev:<id>:{<tag>}        its events, a stream whose entry ids are their numbers
//	engine:handoffseq:<id>:{<tag>}       the number of its last event
//	engine:handofflatest:{<tag>}         the conversation's latest handoff: id, and open
//	engine:handofflines:{<tag>}          the conversation's latest lines, for a summary
//	engine:handoffcount:{<hash of key>}  a user's handoffs in the window, a sorted set
//	engine:handoffs:open                 the ids of the open handoffs, a set
//
// An open handoff's records last a day from its last change; an ended one's
// [handoff.KeepEnded].
type Handoffs struct {
	s *Store

	mu   sync.Mutex
	tags map[string]string // id → conversation tag: it never changes
}

var _ handoff.Store = (*Handoffs)(nil)

// Handoffs returns the handoff store of s.
func (s *Store) Handoffs() *Handoffs { return &Handoffs{s: s, tags: map[string]string{}} }

// Kinds of the handoffs' records.
const (
	kindHandoff       = "handoff"
	kindHandoffEvents = "handoffev"
	kindHandoffSeq    = "handoffseq"
	kindHandoffID     = "handoffid"
	kindHandoffLatest = "handofflatest"
	kindHandoffLines  = "handofflines"
	kindHandoffCount  = "handoffcount"
)

// openTTL is how long an open handoff's records last after its last change.
const openTTL = 24 * time.Hour

// maxHandoffID bounds the ids the store looks up: they come from requests.
const maxHandoffID = 64

func tagOf(parts ...string) string {
	h := sha256.New()
	for _, p := range parts {
		h.Write([]byte(p))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil)[:16])
}

func (h *Handoffs) openKey() string { return h.s.prefix + "handoffs:open" }

func (h *Handoffs) keys(id, tag string) (state, events, seq string) {
	return h.s.key(kindHandoff, id+":"+tag), h.s.key(kindHandoffEvents, id+":"+tag), h.s.key(kindHandoffSeq, id+":"+tag)
}

type handoffRecord struct {
	V     int             `json:"v"`
	State json.RawMessage `json:"state"`
}

// encode returns st as the record at key, sealed with Options.SealKey.
func (h *Handoffs) encode(key string, v any) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	if h.s.sealer != nil {
		b = seal(h.s.sealer.aead(key), b, key)
	}
	return b, nil
}

// decode opens the record at key into v.
func (h *Handoffs) decode(key string, b []byte, v any) error {
	if h.s.sealer != nil {
		var err error
		if b, err = open(h.s.sealer.aead(key), b, key); err != nil {
			return fmt.Errorf("%w: %s: %w", ErrUnreadable, key, err)
		}
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("%w: %s", ErrUnreadable, key)
	}
	return nil
}

func (h *Handoffs) encodeState(key string, st *handoff.State) ([]byte, error) {
	raw, err := json.Marshal(st)
	if err != nil {
		return nil, err
	}
	return h.encode(key, handoffRecord{V: 1, State: raw})
}

func (h *Handoffs) decodeState(key string, b []byte) (*handoff.State, error) {
	var rec handoffRecord
	if err := h.decode(key, b, &rec); err != nil {
		return nil, err
	}
	if rec.V != 1 {
		return nil, fmt.Errorf("%w: %s is of version %d", ErrUnreadable, key, rec.V)
	}
	var st handoff.State
	if err := json.Unmarshal(rec.State, &st); err != nil {
		return nil, fmt.Errorf("%w: %s", ErrUnreadable, key)
	}
	return &st, nil
}

// createScript stores a handoff unless its conversation's latest is open.
// KEYS: latest, state, id index. ARGV: id, state, ttl ms, tag.
var createScript = redis.NewScript(`
if redis.call('HGET', KEYS[1], 'open') == '1' then return 0 end
redis.call('HSET', KEYS[1], 'id', ARGV[1], 'open', '1')
redis.call('PEXPIRE', KEYS[1], ARGV[3])
redis.call('SET', KEYS[2], ARGV[2], 'PX', ARGV[3])
return 1`)

// Create implements [handoff.Store].
func (h *Handoffs) Create(ctx context.Context, st *handoff.State) error {
	if st.ID == "" || len(st.ID) > maxHandoffID {
		return fmt.Errorf("redisstore: a handoff id must be 1 to %d bytes", maxHandoffID)
	}
	tag := tagOf(st.Tenant, st.User, st.ConversationID)
	state, _, _ := h.keys(st.ID, tag)
	val, err := h.encodeState(state, st)
	if err != nil {
		return err
	}
	ttl := strconv.FormatInt(openTTL.Milliseconds(), 10)
	// The index first: a handoff whose creation fails leaves an index to nothing, which reads
	// as no handoff.
	if _, err := do(ctx, h.s, func(ctx context.Context) (struct{}, error) {
		return struct{}{}, h.s.client.Set(ctx, h.s.key(kindHandoffID, st.ID), tag, openTTL).Err()
	}); err != nil {
		return unavailable("keeping a handoff", err)
	}
	n, err := do(ctx, h.s, func(ctx context.Context) (int64, error) {
		return createScript.Run(ctx, h.s.client, []string{h.s.key(kindHandoffLatest, tag), state}, st.ID, val, ttl).Int64()
	})
	if err != nil {
		return unavailable("keeping a handoff", err)
	}
	if n == 0 {
		return handoff.ErrActive
	}
	h.remember(st.ID, tag)
	if _, err := do(ctx, h.s, func(ctx context.Context) (struct{}, error) {
		return struct{}{}, h.s.client.SAdd(ctx, h.openKey(), st.ID).Err()
	}); err != nil {
		return unavailable("listing an open handoff", err)
	}
	return nil
}

func (h *Handoffs) remember(id, tag string) {
	h.mu.Lock()
	if len(h.tags) > 100_000 {
		clear(h.tags) // a bound, not a policy: tags are read again
	}
	h.tags[id] = tag
	h.mu.Unlock()
}

// tag returns the conversation tag of handoff id; handoff.ErrNotFound when there is none.
func (h *Handoffs) tag(ctx context.Context, id string) (string, error) {
	if id == "" || len(id) > maxHandoffID {
		return "", handoff.ErrNotFound
	}
	h.mu.Lock()
	tag, ok := h.tags[id]
	h.mu.Unlock()
	if ok {
		return tag, nil
	}
	tag, err := do(ctx, h.s, func(ctx context.Context) (string, error) {
		return h.s.client.Get(ctx, h.s.key(kindHandoffID, id)).Result()
	})
	switch {
	case errors.Is(err, redis.Nil):
		return "", handoff.ErrNotFound
	case err != nil:
		return "", unavailable("finding a handoff", err)
	}
	h.remember(id, tag)
	return tag, nil
}

// Get implements [handoff.Store].
func (h *Handoffs) Get(ctx context.Context, id string) (*handoff.State, error) {
	tag, err := h.tag(ctx, id)
	if err != nil {
		return nil, err
	}
	state, _, _ := h.keys(id, tag)
	b, err := do(ctx, h.s, func(ctx context.Context) ([]byte, error) { return h.s.client.Get(ctx, state).Bytes() })
	switch {
	case errors.Is(err, redis.Nil):
		return nil, handoff.ErrNotFound
	case err != nil:
		return nil, unavailable("reading a handoff", err)
	}
	return h.decodeState(state, b)
}

// Latest implements [handoff.Store].
func (h *Handoffs) Latest(ctx context.Context, tenant, user, conversation string) (*handoff.State, error) {
	id, err := do(ctx, h.s, func(ctx context.Context) (string, error) {
		return h.s.client.HGet(ctx, h.s.key(kindHandoffLatest, tagOf(tenant, user, conversation)), "id").Result()
	})
	switch {
	case errors.Is(err, redis.Nil):
		return nil, handoff.ErrNotFound
	case err != nil:
		return nil, unavailable("reading a conversation's handoff", err)
	}
	return h.Get(ctx, id)
}

// Update implements [handoff.Store]: optimistic, with WATCH, f called again when another
// replica changed the handoff meanwhile.
func (h *Handoffs) Update(ctx context.Context, id string, f func(*handoff.State) error) (*handoff.State, error) {
	tag, err := h.tag(ctx, id)
	if err != nil {
		return nil, err
	}
	state, events, seq := h.keys(id, tag)
	latest := h.s.key(kindHandoffLatest, tag)
	var out *handoff.State
	var fErr error
	for range 20 {
		out, fErr = nil, nil
		_, err = do(ctx, h.s, func(ctx context.Context) (struct{}, error) {
			return struct{}{}, h.s.client.Watch(ctx, func(tx *redis.Tx) error {
				b, err := tx.Get(ctx, state).Bytes()
				if err != nil {
					return err
				}
				st, err := h.decodeState(state, b)
				if err != nil {
					return err
				}
				if fErr = f(st); fErr != nil {
					return nil
				}
				val, err := h.encodeState(state, st)
				if err != nil {
					return err
				}
				ttl := openTTL
				if !st.Status.Open() {
					ttl = handoff.KeepEnded
				}
				_, err = tx.TxPipelined(ctx, func(p redis.Pipeliner) error {
					p.Set(ctx, state, val, ttl)
					p.PExpire(ctx, events, ttl)
					p.PExpire(ctx, seq, ttl)
					if !st.Status.Open() {
						p.HSet(ctx, latest, "open", "0")
					}
					return nil
				})
				out = st
				return err
			}, state)
		})
		if !errors.Is(err, redis.TxFailedErr) {
			break
		}
	}
	switch {
	case errors.Is(err, redis.Nil):
		return nil, handoff.ErrNotFound
	case errors.Is(err, ErrUnreadable):
		return nil, err
	case err != nil:
		return nil, unavailable("changing a handoff", err)
	case fErr != nil:
		return nil, fErr
	}
	// The id's index and the open list are in other slots: kept after the change.
	ttl := openTTL
	if !out.Status.Open() {
		ttl = handoff.KeepEnded
	}
	_, _ = do(ctx, h.s, func(ctx context.Context) (struct{}, error) {
		_, err := h.s.client.Pipelined(ctx, func(p redis.Pipeliner) error {
			p.Expire(ctx, h.s.key(kindHandoffID, id), ttl)
			if !out.Status.Open() {
				p.SRem(ctx, h.openKey(), id)
			}
			return nil
		})
		return struct{}{}, err
	})
	return out, nil
}

// appendScript numbers an event and adds it to the handoff's stream, keeping the last
// MaxEvents. KEYS: seq, stream. ARGV: data, ttl ms, max events.
var appendScript = redis.NewScript(`
local n = redis.call('INCR', KEYS[1])
redis.call('XADD', KEYS[2], 'MAXLEN', '~', ARGV[3], n .. '-0', 'd', ARGV[1])
redis.call('PEXPIRE', KEYS[1], ARGV[2])
redis.call('PEXPIRE', KEYS[2], ARGV[2])
return n`)

// Append implements [handoff.Store].
func (h *Handoffs) Append(ctx context.Context, id string, ev *handoff.Event) error {
	tag, err := h.tag(ctx, id)
	if err != nil {
		return err
	}
	_, events, seq := h.keys(id, tag)
	e := *ev
	e.Seq = 0
	val, err := h.encode(events, &e)
	if err != nil {
		return err
	}
	n, err := do(ctx, h.s, func(ctx context.Context) (int64, error) {
		return appendScript.Run(ctx, h.s.client, []string{seq, events}, val, openTTL.Milliseconds(), handoff.MaxEvents).Int64()
	})
	if err != nil {
		return unavailable("adding a handoff's event", err)
	}
	ev.Seq = n
	return nil
}

// Events implements [handoff.Store]: it waits with XREAD BLOCK when one of the store's
// blocking reads is free (Options.BlockingReads), else looks again every 100 ms.
func (h *Handoffs) Events(ctx context.Context, id string, after int64, wait time.Duration) ([]handoff.Event, error) {
	tag, err := h.tag(ctx, id)
	if err != nil {
		return nil, err
	}
	state, events, _ := h.keys(id, tag)
	deadline := time.Now().Add(wait)
	for {
		var (
			ex *redis.IntCmd
			xs *redis.XMessageSliceCmd
		)
		_, err := do(ctx, h.s, func(ctx context.Context) (struct{}, error) {
			_, err := h.s.client.Pipelined(ctx, func(p redis.Pipeliner) error {
				ex = p.Exists(ctx, state)
				xs = p.XRangeN(ctx, events, strconv.FormatInt(after+1, 10)+"-0", "+", handoff.MaxEvents)
				return nil
			})
			return struct{}{}, err
		})
		if err != nil {
			return nil, unavailable("reading a handoff's events", err)
		}
		if ex.Val() == 0 {
			return nil, handoff.ErrNotFound
		}
		out, err := h.events(events, xs.Val())
		left := time.Until(deadline)
		if err != nil || len(out) > 0 || left <= 0 {
			return out, err
		}
		select {
		case h.s.blocking <- struct{}{}:
			block := min(left, 2*time.Second)
			bctx, cancel := context.WithTimeout(ctx, block+h.s.timeout)
			res, err := h.s.client.XRead(bctx, &redis.XReadArgs{Streams: []string{events, strconv.FormatInt(after, 10) + "-0"},
				Count: handoff.MaxEvents, Block: block}).Result()
			cancel()
			<-h.s.blocking
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			if err != nil && !errors.Is(err, redis.Nil) {
				return nil, unavailable("waiting for a handoff's events", err)
			}
			for _, st := range res {
				got, err := h.events(events, st.Messages)
				if err != nil || len(got) > 0 {
					return got, err
				}
			}
		default:
			t := time.NewTimer(min(left, pollInterval))
			select {
			case <-t.C:
			case <-ctx.Done():
				t.Stop()
				return nil, ctx.Err()
			}
		}
	}
}

// events reads a handoff's stream entries as its events.
func (h *Handoffs) events(stream string, msgs []redis.XMessage) ([]handoff.Event, error) {
	out := make([]handoff.Event, 0, len(msgs))
	for _, m := range msgs {
		ms, _, _ := cutDash(m.ID)
		seq, err := strconv.ParseInt(ms, 10, 64)
		data, _ := m.Values["d"].(string)
		var ev handoff.Event
		if err != nil {
			return nil, fmt.Errorf("%w: a handoff event %q", ErrUnreadable, m.ID)
		}
		if err := h.decode(stream, []byte(data), &ev); err != nil {
			return nil, err
		}
		ev.Seq = seq
		out = append(out, ev)
	}
	return out, nil
}

// Open implements [handoff.Store].
func (h *Handoffs) Open(ctx context.Context) ([]*handoff.State, error) {
	ids, err := do(ctx, h.s, func(ctx context.Context) ([]string, error) { return h.s.client.SMembers(ctx, h.openKey()).Result() })
	if err != nil {
		return nil, unavailable("listing the open handoffs", err)
	}
	var out []*handoff.State
	for _, id := range ids {
		st, err := h.Get(ctx, id)
		if errors.Is(err, handoff.ErrNotFound) || (err == nil && !st.Status.Open()) {
			_, _ = do(ctx, h.s, func(ctx context.Context) (struct{}, error) {
				return struct{}{}, h.s.client.SRem(ctx, h.openKey(), id).Err()
			})
			continue
		}
		if err != nil {
			return nil, err
		}
		out = append(out, st)
	}
	slices.SortFunc(out, func(a, b *handoff.State) int { return a.Created.Compare(b.Created) })
	return out, nil
}

// Count implements [handoff.Store].
func (h *Handoffs) Count(ctx context.Context, key string, window time.Duration) (int, error) {
	k := h.s.key(kindHandoffCount, tagOf(key))
	now := h.s.now()
	member := make([]byte, 8)
	_, _ = rand.Read(member)
	var card *redis.IntCmd
	_, err := do(ctx, h.s, func(ctx context.Context) (struct{}, error) {
		_, err := h.s.client.TxPipelined(ctx, func(p redis.Pipeliner) error {
			p.ZRemRangeByScore(ctx, k, "-inf", "("+strconv.FormatInt(now.Add(-window).UnixMilli(), 10))
			p.ZAdd(ctx, k, redis.Z{Score: float64(now.UnixMilli()), Member: hex.EncodeToString(member)})
			card = p.ZCard(ctx, k)
			p.PExpire(ctx, k, window)
			return nil
		})
		return struct{}{}, err
	})
	if err != nil {
		return 0, unavailable("counting a user's handoffs", err)
	}
	return int(card.Val()), nil
}

// AddLines implements [handoff.Store].
func (h *Handoffs) AddLines(ctx context.Context, tenant, user, conversation string, lines ...handoff.Line) error {
	if len(lines) == 0 {
		return nil
	}
	k := h.s.key(kindHandoffLines, tagOf(tenant, user, conversation))
	vals := make([]any, len(lines))
	for i := range lines {
		b, err := h.encode(k, &lines[i])
		if err != nil {
			return err
		}
		vals[i] = b
	}
	_, err := do(ctx, h.s, func(ctx context.Context) (struct{}, error) {
		_, err := h.s.client.TxPipelined(ctx, func(p redis.Pipeliner) error {
			p.RPush(ctx, k, vals...)
			p.LTrim(ctx, k, -handoff.MaxLines, -1)
			p.PExpire(ctx, k, handoff.LinesTTL)
			return nil
		})
		return struct{}{}, err
	})
	if err != nil {
		return unavailable("keeping a conversation's lines", err)
	}
	return nil
}

// Lines implements [handoff.Store].
func (h *Handoffs) Lines(ctx context.Context, tenant, user, conversation string) ([]handoff.Line, error) {
	k := h.s.key(kindHandoffLines, tagOf(tenant, user, conversation))
	vals, err := do(ctx, h.s, func(ctx context.Context) ([]string, error) { return h.s.client.LRange(ctx, k, 0, -1).Result() })
	if err != nil {
		return nil, unavailable("reading a conversation's lines", err)
	}
	out := make([]handoff.Line, 0, len(vals))
	for _, v := range vals {
		var l handoff.Line
		if err := h.decode(k, []byte(v), &l); err != nil {
			continue // a line that does not open is left out of the summary
		}
		out = append(out, l)
	}
	return out, nil
}
