package redisstore

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/convengine/engine"
	"github.com/redis/go-redis/v9"
)

// PutSession stores s until s.ExpiresAt, replacing the session of the same id. A session that
// has already expired replaces that session with none.
func (s *Store) PutSession(ctx context.Context, sess *engine.Session) error {
	data, err := encodeSession(sess)
	if err != nil {
		return fmt.Errorf("redisstore: encoding a session: %w", err)
	}
	key, ttl := s.key(kindSession, sess.ID), s.ttl(sess.ExpiresAt)
	_, err = do(ctx, s, func(ctx context.Context) (struct{}, error) {
		if ttl == 0 {
			return struct{}{}, s.client.Del(ctx, key).Err()
		}
		return struct{}{}, s.client.Set(ctx, key, data, ttl).Err()
	})
	if err != nil {
		return unavailable("storing a session", err)
	}
	if sess.User != "" && s.maxPerUser > 0 && ttl > 0 {
		if err := s.boundUser(ctx, sess); err != nil {
			return unavailable("bounding a user's sessions", err)
		}
	}
	return nil
}

// boundUser notes sess among its user's sessions, a sorted set scored by expiry, and drops the
// oldest past Options.MaxSessionsPerUser. The set and the sessions live in different slots of a
// cluster, so this is not one atomic step: users creating sessions at the same moment on
// several replicas may keep one or two more for as long as they live.
func (s *Store) boundUser(ctx context.Context, sess *engine.Session) error {
	ukey := s.key(kindUser, sess.TenantKey+":"+sess.User)
	now := s.now()
	_, err := do(ctx, s, func(ctx context.Context) (struct{}, error) {
		pipe := s.client.TxPipeline()
		pipe.ZAdd(ctx, ukey, redis.Z{Score: float64(sess.ExpiresAt.UnixMilli()), Member: sess.ID})
		pipe.ZRemRangeByScore(ctx, ukey, "-inf", strconv.FormatInt(now.UnixMilli(), 10))
		pipe.PExpireAt(ctx, ukey, sess.ExpiresAt.Add(time.Second))
		over := pipe.ZRange(ctx, ukey, 0, int64(-s.maxPerUser-1))
		if _, err := pipe.Exec(ctx); err != nil {
			return struct{}{}, err
		}
		ids := over.Val()
		if len(ids) == 0 {
			return struct{}{}, nil
		}
		members := make([]any, len(ids))
		keys := make([]string, len(ids))
		for i, id := range ids {
			members[i], keys[i] = id, s.key(kindSession, id)
		}
		if err := s.client.ZRem(ctx, ukey, members...).Err(); err != nil {
			return struct{}{}, err
		}
		for _, k := range keys { // one by one: in a cluster they live in different slots
			if err := s.client.Del(ctx, k).Err(); err != nil {
				return struct{}{}, err
			}
		}
		return struct{}{}, nil
	})
	return err
}

// Session returns the session of id, or [engine.ErrSessionNotFound] for an unknown or expired
// id.
func (s *Store) Session(ctx context.Context, id string) (*engine.Session, error) {
	key := s.key(kindSession, id)
	data, err := do(ctx, s, func(ctx context.Context) ([]byte, error) {
		b, err := s.client.Get(ctx, key).Bytes()
		if errors.Is(err, redis.Nil) {
			return nil, nil
		}
		return b, err
	})
	if err != nil {
		return nil, unavailable("reading a session", err)
	}
	if data == nil {
		return nil, engine.ErrSessionNotFound
	}
	sess, err := decodeSession(data)
	if err != nil {
		return nil, fmt.Errorf("redisstore: reading a session: %w", err)
	}
	if !s.now().Before(sess.ExpiresAt) {
		return nil, engine.ErrSessionNotFound
	}
	return sess, nil
}
