package redisstore

import (
	"context"
	"errors"
	"fmt"

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
	return nil
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
