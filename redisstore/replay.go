package redisstore

import (
	"context"
	"errors"
	"time"

	"github.com/redis/go-redis/v9"
)

// Claim records key until expiry and reports true, or reports false when key is recorded and
// has not expired: one SET NX with a millisecond expiry, atomic across every replica, confirmed
// by [Options.ReplicaAcks] replicas. It reports false with an error wrapping [ErrUnavailable]
// when Redis does not answer, or when the replicas do not confirm a claim in time (the claim is
// then given back, so that the same value can be tried again).
func (s *Store) Claim(ctx context.Context, key string, expiry time.Time) (bool, error) {
	k, ttl := s.key(kindReplay, key), s.ttl(expiry)
	ok, err := do(ctx, s, func(ctx context.Context) (bool, error) {
		if ttl == 0 {
			// Already expired: nothing to record, but a live claim still refuses it.
			n, err := s.client.Exists(ctx, k).Result()
			return err == nil && n == 0, err
		}
		var set *redis.BoolCmd
		err := s.acked(ctx, k, func(c redis.Cmdable) redis.Cmder {
			set = c.SetNX(ctx, k, claimValue, ttl)
			return set
		})
		claimed, serr := set.Result()
		switch {
		case serr != nil:
			return false, serr
		case claimed && err != nil:
			// Only the primary has it: a failover could grant it again.
			s.client.Del(ctx, k)
			return false, err
		}
		return claimed, nil
	})
	if err != nil {
		return false, unavailable("claiming a single-use value", err)
	}
	return ok, nil
}

// Bind binds key to value until expiry unless it is bound, and returns the value bound: one
// SET NX GET (Redis 7), atomic across every replica, a new binding confirmed by
// [Options.ReplicaAcks] replicas. It returns an error wrapping [ErrUnavailable] when Redis does
// not answer, or when the replicas do not confirm a new binding in time (binding the same value
// again then returns it).
func (s *Store) Bind(ctx context.Context, key, value string, expiry time.Time) (string, error) {
	k, ttl := s.key(kindBind, key), s.ttl(expiry)
	if ttl == 0 {
		ttl = time.Millisecond
	}
	bound, err := do(ctx, s, func(ctx context.Context) (string, error) {
		var set *redis.StatusCmd
		err := s.acked(ctx, k, func(c redis.Cmdable) redis.Cmder {
			set = c.SetArgs(ctx, k, value, redis.SetArgs{Mode: "NX", Get: true, TTL: ttl})
			return set
		})
		prev, serr := set.Result()
		switch {
		case errors.Is(serr, redis.Nil):
			return value, err
		case serr != nil:
			return "", serr
		}
		return prev, nil
	})
	if err != nil {
		return "", unavailable("binding a value", err)
	}
	return bound, nil
}
