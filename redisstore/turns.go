package redisstore

import (
	"context"
	"crypto/cipher"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/convengine/engine"
)

// A turn's log is two records sharing a hash tag: a stream whose entries are the turn's
// events, each under the id "<event id>-0" with fields e (name) and d (data), or, sealed
// (Options.SealKey), n (name) and s (data sealed, bound to the stream's key, the event's id
// and its name), and a hash of its owner (tenant, user, session) and done. A release that
// reads only e and d finds no name in a sealed entry, and refuses it rather than answer it
// empty. Appends are one MULTI per batch of events; a reader
// waits for more with XREAD BLOCK, or polls when Options.BlockingReads are all taken. A third
// record, a key that expires after engine.TurnLease, is the lease of the replica running the
// turn: each append renews it, done deletes it, and a turn whose owner record says it was
// leased ("leased") but whose lease is gone is engine.TurnRecord.Lost. Redis's own clock
// expires it, so the replicas' clocks do not matter.

// pollInterval is how often a resume without a blocking read looks for new events.
const pollInterval = 100 * time.Millisecond

// AppendEvents adds evs to the turn's log: one transaction, its XADDs, the owner on the first
// call, done at the end, and both records kept until keep.
func (s *Store) AppendEvents(ctx context.Context, turn string, owner *engine.TurnOwner, evs []engine.LoggedEvent, done bool, keep time.Time) error {
	stream, meta, lease, ttl := s.key(kindTurn, turn), s.key(kindTurnMeta, turn), s.key(kindTurnLease, turn), s.ttl(keep)
	if ttl == 0 {
		return nil
	}
	values := make([][]any, len(evs))
	if s.sealer != nil {
		a := s.sealer.aead(stream)
		for i, ev := range evs {
			values[i] = []any{"n", ev.Name, "s", seal(a, ev.Data, eventAD(stream, ev.ID, ev.Name))}
		}
	} else {
		for i, ev := range evs {
			values[i] = []any{"e", ev.Name, "d", ev.Data}
		}
	}
	_, err := do(ctx, s, func(ctx context.Context) (struct{}, error) {
		cmds, err := s.client.TxPipelined(ctx, func(p redis.Pipeliner) error {
			if owner != nil {
				p.HSet(ctx, meta, "tenant", owner.Tenant, "user", owner.User, "session", owner.Session, "env", owner.Environment, "leased", "1")
			}
			for i, ev := range evs {
				p.XAdd(ctx, &redis.XAddArgs{Stream: stream, ID: strconv.Itoa(ev.ID) + "-0", Values: values[i]})
			}
			if done {
				p.HSet(ctx, meta, "done", "1")
				p.Del(ctx, lease)
			} else {
				p.Set(ctx, lease, "1", engine.TurnLease)
			}
			p.PExpire(ctx, stream, ttl)
			p.PExpire(ctx, meta, ttl)
			return nil
		})
		if err != nil && written(cmds) {
			err = nil // an earlier try of this batch, whose answer was lost, wrote it
		}
		return struct{}{}, err
	})
	if err != nil {
		return unavailable("appending a turn's events", err)
	}
	return nil
}

// written reports whether a transaction failed only because its events are in the stream
// already: each XADD refused an id not above the stream's last, and nothing else failed. A
// transaction is applied whole or not at all, so the batch was written by an earlier try.
func written(cmds []redis.Cmder) bool {
	adds := 0
	for _, c := range cmds {
		switch err := c.Err(); {
		case err == nil:
		case c.Name() == "xadd" && strings.Contains(err.Error(), "equal or smaller than the target stream top item"):
			adds++
		default:
			return false
		}
	}
	return adds > 0
}

// ReadEvents returns the turn's owner, its events after after and whether it is over, waiting
// up to wait for events with XREAD BLOCK when there are none yet. A turn with an event that
// does not open (Options.SealKey) is [engine.ErrTurnNotFound].
func (s *Store) ReadEvents(ctx context.Context, turn string, after, max int, wait time.Duration) (*engine.TurnRecord, error) {
	stream, meta, lease := s.key(kindTurn, turn), s.key(kindTurnMeta, turn), s.key(kindTurnLease, turn)
	rec, err := do(ctx, s, func(ctx context.Context) (*engine.TurnRecord, error) {
		var (
			m      *redis.MapStringStringCmd
			xs     *redis.XMessageSliceCmd
			leased *redis.IntCmd
		)
		_, err := s.client.Pipelined(ctx, func(p redis.Pipeliner) error {
			m = p.HGetAll(ctx, meta)
			xs = p.XRangeN(ctx, stream, strconv.Itoa(after+1)+"-0", "+", int64(max))
			leased = p.Exists(ctx, lease)
			return nil
		})
		if err != nil {
			return nil, err
		}
		fields := m.Val()
		if len(fields) == 0 {
			return nil, engine.ErrTurnNotFound
		}
		rec := &engine.TurnRecord{Owner: engine.TurnOwner{Tenant: fields["tenant"], User: fields["user"], Session: fields["session"],
			Environment: fields["env"]},
			Done: fields["done"] == "1"}
		rec.Lost = !rec.Done && fields["leased"] == "1" && leased.Val() == 0
		rec.Events, err = s.loggedEvents(stream, xs.Val())
		return rec, err
	})
	switch {
	case errors.Is(err, engine.ErrTurnNotFound):
		return nil, err
	case errors.Is(err, errNotOpened):
		return nil, engine.ErrTurnNotFound
	case err != nil:
		return nil, unavailable("reading a turn's events", err)
	}
	if len(rec.Events) > 0 || rec.Done || rec.Lost || wait <= 0 {
		return rec, nil
	}
	// Nothing yet: block until an event arrives, or wait passes, when a blocking read is free.
	// Otherwise look again after a while without holding a connection: a blocking read holds
	// one of the pool's for its whole wait.
	select {
	case s.blocking <- struct{}{}:
		defer func() { <-s.blocking }()
	default:
		t := time.NewTimer(min(wait, pollInterval))
		defer t.Stop()
		select {
		case <-t.C:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		return s.ReadEvents(ctx, turn, after, max, 0)
	}
	// The blocking call has a deadline of its own, past the store's time-out.
	bctx, cancel := context.WithTimeout(ctx, wait+s.timeout)
	defer cancel()
	res, err := s.client.XRead(bctx, &redis.XReadArgs{Streams: []string{stream, strconv.Itoa(after) + "-0"}, Count: int64(max), Block: wait}).Result()
	switch {
	case errors.Is(err, redis.Nil):
		return rec, nil
	case err != nil:
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, unavailable("waiting for a turn's events", err)
	}
	for _, st := range res {
		evs, err := s.loggedEvents(stream, st.Messages)
		switch {
		case errors.Is(err, errNotOpened):
			return nil, engine.ErrTurnNotFound
		case err != nil:
			return nil, unavailable("reading a turn's events", err)
		}
		rec.Events = append(rec.Events, evs...)
	}
	return rec, nil
}

// loggedEvents reads the entries of stream as events, or returns errNotOpened when one is
// sealed and does not open, or is sealed without a SealKey, or is not sealed with one.
func (s *Store) loggedEvents(stream string, msgs []redis.XMessage) ([]engine.LoggedEvent, error) {
	out := make([]engine.LoggedEvent, 0, len(msgs))
	var a cipher.AEAD
	for _, m := range msgs {
		ms, _, _ := cutDash(m.ID)
		id, err := strconv.Atoi(ms)
		plainName, plain := m.Values["e"].(string)
		sealedName, sealed := m.Values["n"].(string)
		var ev engine.LoggedEvent
		switch {
		case err != nil:
		case plain && s.sealer == nil:
			data, _ := m.Values["d"].(string)
			ev = engine.LoggedEvent{ID: id, Name: plainName, Data: []byte(data)}
		case sealed && s.sealer != nil:
			if a == nil {
				a = s.sealer.aead(stream)
			}
			data, _ := m.Values["s"].(string)
			opened, err := open(a, []byte(data), eventAD(stream, id, sealedName))
			if err != nil {
				return nil, err
			}
			ev = engine.LoggedEvent{ID: id, Name: sealedName, Data: opened}
		case plain || sealed:
			return nil, errNotOpened
		}
		if ev.Name == "" {
			return nil, fmt.Errorf("%w: a turn event %q", ErrUnreadable, m.ID)
		}
		out = append(out, ev)
	}
	return out, nil
}

// eventAD is what a turn event's sealed data is bound to: its stream, its id and its name.
func eventAD(stream string, id int, name string) string {
	return stream + "\x00" + strconv.Itoa(id) + "\x00" + name
}

func cutDash(id string) (string, string, bool) {
	for i := 0; i < len(id); i++ {
		if id[i] == '-' {
			return id[:i], id[i+1:], true
		}
	}
	return id, "", false
}

var _ engine.TurnLog = (*Store)(nil)
