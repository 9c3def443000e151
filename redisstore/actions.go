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

// abandonScript deletes the action's record if it is the claim ARGV[1], and nothing else.
const abandonScript = `
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
`

// BeginAction claims id until leaseUntil, unless it is claimed or finished: one script, atomic
// across every replica. It returns the recorded result of a finished action,
// [engine.ErrActionInProgress] while a claim holds id, or nil, nil when the caller now holds
// the claim. A claim whose lease passed has expired, and can be taken again. When Redis does
// not answer, the error wraps [ErrUnavailable] and the caller holds no claim.
func (s *Store) BeginAction(ctx context.Context, id string, leaseUntil time.Time) ([]byte, error) {
	key, ttl := s.key(kindAction, id), s.ttl(leaseUntil)
	data, err := do(ctx, s, func(ctx context.Context) ([]byte, error) {
		b, err := s.begin.Run(ctx, s.client, []string{key}, runningValue, ttl.Milliseconds()).Text()
		if errors.Is(err, redis.Nil) {
			return nil, nil
		}
		return []byte(b), err
	})
	if err != nil {
		return nil, unavailable("claiming an action", err)
	}
	if data == nil {
		return nil, nil
	}
	result, err := decodeAction(data)
	switch {
	case errors.Is(err, engine.ErrActionInProgress):
		return nil, err
	case err != nil:
		return nil, fmt.Errorf("redisstore: claiming an action: %w", err)
	}
	return result, nil
}

// FinishAction records the result of id until expiry, replacing its claim.
func (s *Store) FinishAction(ctx context.Context, id string, result []byte, expiry time.Time) error {
	key, ttl, value := s.key(kindAction, id), s.ttl(expiry), encodeResult(result)
	_, err := do(ctx, s, func(ctx context.Context) (struct{}, error) {
		if ttl == 0 {
			return struct{}{}, s.client.Del(ctx, key).Err()
		}
		return struct{}{}, s.client.Set(ctx, key, value, ttl).Err()
	})
	if err != nil {
		return unavailable("recording an action", err)
	}
	return nil
}

// AbandonAction releases the claim of id, so that the same token can be tried again. A
// finished action keeps its result.
func (s *Store) AbandonAction(ctx context.Context, id string) error {
	key := s.key(kindAction, id)
	_, err := do(ctx, s, func(ctx context.Context) (struct{}, error) {
		return struct{}{}, s.abandon.Run(ctx, s.client, []string{key}, runningValue).Err()
	})
	if err != nil {
		return unavailable("releasing an action", err)
	}
	return nil
}
