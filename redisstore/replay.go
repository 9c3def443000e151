package redisstore

import (
	"context"
	"time"
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
