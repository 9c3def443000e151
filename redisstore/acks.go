package redisstore

import (
	"context"
	"errors"
	"fmt"

	"github.com/redis/go-redis/v9"
)

// errNotReplicated reports a write the primary made and its replicas did not confirm in time.
var errNotReplicated = errors.New("the replicas did not confirm the write in time")

// acked runs the write that queue makes on the primary that holds key and, when the store
// waits for replicas, a WAIT for them on the same connection: WAIT counts the writes of the
// connection it is sent on, and a pipeline keeps to one. Redis replicates asynchronously, so
// without it a primary that dies before its replica has a single-use claim lets the promoted
// replica grant the claim again. queue returns the command whose reply the caller reads; its
// own error (redis.Nil included) is the caller's to read. acked returns the error of sending
// them, or one wrapping errNotReplicated when fewer replicas than asked confirmed the write
// within half the store's time-out.
func (s *Store) acked(ctx context.Context, key string, queue func(redis.Cmdable) redis.Cmder) error {
	if s.acks <= 0 {
		queue(s.client) // sent alone: a pipeline of one costs a cluster client more
		return nil
	}
	c, err := s.primaryFor(ctx, key)
	if err != nil {
		return err
	}
	var write redis.Cmder
	// WAIT is not in the Pipeliner interface; its timeout is in milliseconds, 0 is forever.
	wait := redis.NewIntCmd(ctx, "wait", s.acks, max(1, (s.timeout/2).Milliseconds()))
	_, err = c.Pipelined(ctx, func(p redis.Pipeliner) error {
		write = queue(p)
		return p.Process(ctx, wait)
	})
	switch {
	case err != nil && err != write.Err():
		return err
	case wait.Err() != nil:
		return wait.Err()
	case wait.Val() < int64(s.acks):
		return fmt.Errorf("%w (%d of %d)", errNotReplicated, wait.Val(), s.acks)
	}
	return nil
}

// primaryFor returns the client of the one server that holds key, for a pipeline that must
// keep to it.
func (s *Store) primaryFor(ctx context.Context, key string) (redis.Cmdable, error) {
	switch c := s.client.(type) {
	case *redis.ClusterClient:
		return c.MasterForKey(ctx, key)
	case *redis.Ring:
		return c.GetShardClientForKey(key)
	}
	return s.client, nil
}
