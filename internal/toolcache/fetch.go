package toolcache

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Fetch returns the list kept for key while it is fresh, else the one list makes, made once for
// all the callers that ask at the same time: in the background, for at most d, so that a
// caller that gives up does not fail the others. A list that failed is not kept. After Close,
// list runs on the caller's ctx.
func (c *Cache[T, O, I]) Fetch(ctx context.Context, key string, now func() time.Time, d time.Duration, list func(context.Context) ([]T, error)) ([]T, error) {
	if l, ok := c.List(key, now()); ok {
		return l, nil
	}
	ch := c.group.DoChan("list\x00"+key, func() (any, error) {
		if !c.Enter() {
			return nil, ErrClosed
		}
		defer c.Exit()
		lctx, cancel := c.Detach(ctx, d)
		defer cancel()
		l, err := list(lctx)
		if err != nil {
			return nil, err
		}
		c.PutList(key, l, now())
		return l, nil
	})
	select {
	case res := <-ch:
		if errors.Is(res.Err, ErrClosed) {
			return list(ctx)
		}
		l, _ := res.Val.([]T)
		return l, res.Err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// Warm runs warm for key as background work for at most d (see [Cache.Go]), once for all the
// calls that ask at the same time; failed learns of its error, unless the Cache was closed.
func (c *Cache[T, O, I]) Warm(ctx context.Context, key string, d time.Duration, warm func(context.Context) error, failed func(context.Context, error)) {
	c.Go(ctx, d, func(wctx context.Context) {
		_, err, _ := c.group.Do("warm\x00"+key, func() (any, error) { return nil, warm(wctx) })
		if err != nil && !errors.Is(err, ErrClosed) {
			failed(wctx, err)
		}
	})
}

// Recover, deferred, turns a panic of background work into *err, "what panicked": the work
// runs on a goroutine of its own, where a panic would end the process.
func Recover(err *error, what string) {
	if v := recover(); v != nil {
		*err = fmt.Errorf("%s panicked: %T", what, v)
	}
}
