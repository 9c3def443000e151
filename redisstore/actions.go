package redisstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/convengine/engine"
	"github.com/redis/go-redis/v9"
)

// beginScript returns the action's record if there is one, else claims the action for ARGV[2]
// milliseconds (none when 0: the lease has already passed) and returns nil.
const beginScript = `
local v = redis.call('GET', KEYS[1])
if v then return v end
local ms = tonumber(ARGV[2])
if ms > 0 then redis.call('SET', KEYS[1], ARGV[1], 'PX', ms) end
return false
`

// finishScript records the result ARGV[2] for ARGV[3] milliseconds (deletes the record when 0)
// if the record is the claim ARGV[1] or there is none, and returns 1; it returns 0, changing
// nothing, when another claim or a result holds the action.
const finishScript = `
local v = redis.call('GET', KEYS[1])
if v and v ~= ARGV[1] then return 0 end
local ms = tonumber(ARGV[3])
if ms > 0 then redis.call('SET', KEYS[1], ARGV[2], 'PX', ms) else redis.call('DEL', KEYS[1]) end
return 1
`

// abandonScript deletes the action's record if it is the claim ARGV[1], and nothing else.
const abandonScript = `
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
`

// BeginAction claims id until leaseUntil, unless it is claimed or finished: one script, atomic
// across every replica, a claim confirmed by [Options.ReplicaAcks] replicas. It returns the
// recorded result of a finished action, [engine.ErrActionInProgress] while a claim holds id,
// or nil, nil when the caller now holds the claim. A claim whose lease passed has expired, and
// can be taken again. When Redis does not answer, or the replicas do not confirm the claim in
// time, the error wraps [ErrUnavailable] and the caller holds no claim.
func (s *Store) BeginAction(ctx context.Context, id, owner string, leaseUntil time.Time) ([]byte, error) {
	key, ttl := s.key(kindAction, id), s.ttl(leaseUntil)
	data, err := do(ctx, s, func(ctx context.Context) ([]byte, error) {
		var run *redis.Cmd
		err := s.acked(ctx, key, func(c redis.Cmdable) redis.Cmder {
			run = s.begin.Eval(ctx, c, []string{key}, runningValue(owner), ttl.Milliseconds())
			return run
		})
		b, rerr := run.Text()
		switch {
		case errors.Is(rerr, redis.Nil) && err != nil:
			// Claimed on the primary alone, where a failover could lose it: give it back.
			s.abandon.Run(ctx, s.client, []string{key}, runningValue(owner))
			return nil, err
		case errors.Is(rerr, redis.Nil):
			return nil, nil
		}
		return []byte(b), rerr
	})
	if err != nil {
		return nil, unavailable("claiming an action", err)
	}
	if data == nil {
		return nil, nil
	}
	result, err := s.decodeAction(key, data)
	switch {
	case errors.Is(err, engine.ErrActionInProgress):
		return nil, err
	case err != nil:
		return nil, fmt.Errorf("redisstore: claiming an action: %w", err)
	}
	return result, nil
}

// FinishAction records the result of owner's action until expiry, replacing its claim, in one
// script; when another owner's claim or a result holds id it returns
// [engine.ErrActionInProgress] and changes nothing. A result the replicas do not confirm in
// time is kept on the primary, and the error wraps [ErrUnavailable].
func (s *Store) FinishAction(ctx context.Context, id, owner string, result []byte, expiry time.Time) error {
	key, ttl := s.key(kindAction, id), s.ttl(expiry)
	value := s.encodeResult(key, result)
	done, err := do(ctx, s, func(ctx context.Context) (int64, error) {
		var run *redis.Cmd
		err := s.acked(ctx, key, func(c redis.Cmdable) redis.Cmder {
			run = s.finish.Eval(ctx, c, []string{key}, runningValue(owner), value, ttl.Milliseconds())
			return run
		})
		n, rerr := run.Int64()
		if rerr == nil && n == 1 {
			rerr = err // recorded on the primary alone, where a failover could lose it
		}
		return n, rerr
	})
	if err != nil {
		return unavailable("recording an action", err)
	}
	if done == 0 {
		return engine.ErrActionInProgress
	}
	return nil
}

// AbandonAction releases owner's claim of id, so that the same token can be tried again.
// Another owner's claim, and a finished action's result, stay.
func (s *Store) AbandonAction(ctx context.Context, id, owner string) error {
	key := s.key(kindAction, id)
	_, err := do(ctx, s, func(ctx context.Context) (struct{}, error) {
		return struct{}{}, s.abandon.Run(ctx, s.client, []string{key}, runningValue(owner)).Err()
	})
	if err != nil {
		return unavailable("releasing an action", err)
	}
	return nil
}
