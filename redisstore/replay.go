package redisstore

import (
	"context"
	"errors"
	"time"

	"github.com/redis/go-redis/v9"
)

// Claim records key until expiry and reports true, or reports false when key is recorded and
// has not expired: one SET NX with a millisecond expiry, atomic across every replica. It
// reports false with an error wrapping [ErrUnavailable] when Redis does not answer.
func (s *Store) Claim(ctx context.Context, key string, expiry time.Time) (bool, error) {
	k, ttl := s.key(kindReplay, key), s.ttl(expiry)
	ok, err := do(ctx, s, func(ctx context.Context) (bool, error) {
		if ttl == 0 {
			// Already expired: nothing to record, but a live claim still refuses it.
			n, err := s.client.Exists(ctx, k).Result()
			return err == nil && n == 0, err
		}
		return s.client.SetNX(ctx, k, claimValue, ttl).Result()
	})
	if err != nil {
		return false, unavailable("claiming a single-use value", err)
	}
	return ok, nil
}

// Bind binds key to value until expiry unless it is bound, and returns the value bound: one
// SET NX GET (Redis 7), atomic across every replica. It returns an error wrapping
// [ErrUnavailable] when Redis does not answer.
func (s *Store) Bind(ctx context.Context, key, value string, expiry time.Time) (string, error) {
	k, ttl := s.key(kindBind, key), s.ttl(expiry)
	if ttl == 0 {
		ttl = time.Millisecond
	}
	bound, err := do(ctx, s, func(ctx context.Context) (string, error) {
		prev, err := s.client.SetArgs(ctx, k, value, redis.SetArgs{Mode: "NX", Get: true, TTL: ttl}).Result()
		if errors.Is(err, redis.Nil) {
			return value, nil
		}
		return prev, err
	})
	if err != nil {
		return "", unavailable("binding a value", err)
	}
	return bound, nil
}
