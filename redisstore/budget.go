package redisstore

import (
	"context"
	"sync"

	"github.com/redis/go-redis/v9"

	"github.com/convengine/engine"
	"github.com/convengine/engine/internal/quota"
)

// reserveScript adds to every counter of KEYS, or to none when one of them would pass its
// limit: it then returns that counter's number, from 1, and what it has left ({0, 0} when it
// added). ARGV holds, for each key in turn, what
// to add, the limit (0: none) and when the key expires, in Unix milliseconds: the end of its
// window.
var reserveScript = redis.NewScript(`
for i = 1, #KEYS do
  local add, limit = tonumber(ARGV[3*i-2]), tonumber(ARGV[3*i-1])
  if limit > 0 and add > 0 then
    local have = tonumber(redis.call('GET', KEYS[i]) or '0') or 0
    if have + add > limit then return {i, limit - have} end
  end
end
for i = 1, #KEYS do
  local add = tonumber(ARGV[3*i-2])
  if add ~= 0 then
    redis.call('INCRBY', KEYS[i], add)
    redis.call('PEXPIREAT', KEYS[i], ARGV[3*i])
  end
end
return {0, 0}
`)

// settleScript adds ARGV[2i-1] to the counter KEYS[i], which expires at ARGV[2i] if it is new.
var settleScript = redis.NewScript(`
for i = 1, #KEYS do
  local d = tonumber(ARGV[2*i-1])
  if d ~= 0 then
    local fresh = redis.call('EXISTS', KEYS[i]) == 0
    redis.call('INCRBY', KEYS[i], d)
    if fresh then redis.call('PEXPIREAT', KEYS[i], ARGV[2*i]) end
  end
end
return 0
`)

var _ engine.Budget = (*Store)(nil)

// Reserve implements [engine.Budget]: one script, atomic across every replica, checks the
// tenant's counters of the day and the month and adds s to all of them, or to none. The
// counters of a tenant share its key as their Redis Cluster hash tag, and expire when their
// window (a UTC day or month of the replica's clock) closes. When Redis does not answer, the
// error wraps [ErrUnavailable] and the engine refuses the work: budgets fail closed.
func (s *Store) Reserve(ctx context.Context, sp engine.Spend) (engine.Reservation, error) {
	now := s.now()
	cs := quota.Counters(sp, now)
	keys := s.budgetKeys(sp.Tenant.Key, cs)
	args := make([]any, 0, 3*len(cs))
	for _, c := range cs {
		args = append(args, c.Add, c.Max, c.End.UnixMilli())
	}
	res, err := do(ctx, s, func(ctx context.Context) ([]int64, error) {
		return reserveScript.Run(ctx, s.client, keys, args...).Int64Slice()
	})
	switch {
	case err != nil:
		return nil, unavailable("reserving a budget", err)
	case len(res) == 2 && res[0] > 0 && int(res[0]) <= len(cs):
		c := cs[res[0]-1]
		return nil, &engine.QuotaError{Limit: c.Limit, RetryAfter: c.End.Sub(now), Remaining: max(0, res[1])}
	}
	return &budgetReservation{s: s, keys: keys, counters: cs}, nil
}

// budgetKeys names the counters of tenant: engine:budget:{tenant}:tokens:d:20261126, ….
func (s *Store) budgetKeys(tenant string, cs []quota.Counter) []string {
	keys := make([]string, len(cs))
	for i, c := range cs {
		keys[i] = s.prefix + kindBudget + ":{" + tenant + "}:" + c.Key
	}
	return keys
}

const kindBudget = "budget"

type budgetReservation struct {
	s        *Store
	keys     []string
	counters []quota.Counter
	once     sync.Once
	err      error
}

// Settle implements [engine.Reservation]: the differences between what was spent and what was
// reserved, added to the counters of the windows reserved in that are still open. It settles
// once; when it fails, the reservation stays counted, which errs on the side of the budget.
func (r *budgetReservation) Settle(ctx context.Context, spent engine.Spend) error {
	r.once.Do(func() {
		d := quota.Deltas(r.counters, spent)
		now := r.s.now()
		var keys []string
		var args []any
		for i, c := range r.counters {
			if d[i] != 0 && now.Before(c.End) {
				keys = append(keys, r.keys[i])
				args = append(args, d[i], c.End.UnixMilli())
			}
		}
		if len(keys) == 0 {
			return
		}
		_, err := do(ctx, r.s, func(ctx context.Context) (int64, error) {
			return settleScript.Run(ctx, r.s.client, keys, args...).Int64()
		})
		if err != nil {
			r.err = unavailable("settling a budget", err)
		}
	})
	return r.err
}
