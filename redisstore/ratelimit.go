package redisstore

import (
	"context"
	"errors"
	"time"

	"github.com/convengine/engine"
)

// rateScript takes one request from each token bucket of KEYS, or from none of them. ARGV holds,
// for each key in turn, its rate in requests per minute and its burst. It returns 0 when it took
// the requests, else how many microseconds until every bucket has one.
//
// A bucket is the string "1 <tokens> <time>": a version, the tokens it held at the time, in
// microseconds of the server's clock. A missing bucket, or one this script cannot read, is full.
// Each is written to expire when it would be full again, so that idle buckets take no memory.
const rateScript = `
if redis.replicate_commands then redis.replicate_commands() end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local have, wait = {}, 0
for i = 1, #KEYS do
  local rate, burst = tonumber(ARGV[2*i-1]) / 60000000, tonumber(ARGV[2*i])
  local tokens = burst
  local v = redis.call('GET', KEYS[i])
  if v then
    local tk, ts = string.match(v, '^1 (%S+) (%S+)$')
    tk, ts = tonumber(tk), tonumber(ts)
    if tk and ts then
      if now > ts then tk = tk + (now - ts) * rate end
      tokens = math.min(tk, burst)
    end
  end
  if tokens < 1 - 1e-9 then
    wait = math.max(wait, math.ceil((1 - tokens) / rate))
  end
  have[i] = tokens - 1
end
if wait > 0 then return wait end
for i = 1, #KEYS do
  local rate, burst = tonumber(ARGV[2*i-1]) / 60000000, tonumber(ARGV[2*i])
  local ms = math.max(1, math.ceil((burst - have[i]) / rate / 1000))
  redis.call('SET', KEYS[i], string.format('1 %.17g %.0f', have[i], now), 'PX', ms)
end
return 0
`

// errTenants is returned for a call that mixes the buckets of several tenants.
var errTenants = errors.New("redisstore: rate limits of several tenants in one call")

// Allow takes one request from every bucket of limits, or from none of them: one script,
// atomic across every replica, that reports how long until every bucket has a request to give
// when any is empty. Time is the Redis server's, so that replicas whose clocks disagree still
// share one rate. The buckets of a call belong to one tenant, whose key is their Redis Cluster
// hash tag: they land in one slot, and one script can take them together. When Redis does not
// answer, the error wraps [ErrUnavailable] and nothing was taken; the engine then applies the
// limits in each process alone until Redis answers again.
func (s *Store) Allow(ctx context.Context, limits []engine.RateLimit) (bool, time.Duration, error) {
	var (
		keyBuf [2]string
		argBuf [4]any
	)
	keys, args, tenant := keyBuf[:0], argBuf[:0], ""
	for _, l := range limits {
		if l.PerMinute <= 0 {
			continue
		}
		if len(keys) > 0 && l.Tenant != tenant {
			return false, 0, errTenants
		}
		tenant = l.Tenant
		keys = append(keys, s.rateKey(l))
		args = append(args, l.PerMinute, max(l.Burst, 1))
	}
	if len(keys) == 0 {
		return true, 0, nil
	}
	wait, err := do(ctx, s, func(ctx context.Context) (int64, error) {
		return s.rate.Run(ctx, s.client, keys, args...).Int64()
	})
	if err != nil {
		return false, 0, unavailable("taking from rate limits", err)
	}
	if wait > 0 {
		return false, time.Duration(wait) * time.Microsecond, nil
	}
	return true, 0, nil
}

// rateKey returns the key of the bucket of l: engine:rate:{tenant}:t for the tenant's,
// engine:rate:{tenant}:u:<user> for a user's.
func (s *Store) rateKey(l engine.RateLimit) string {
	if l.User == "" {
		return s.prefix + kindRate + ":{" + l.Tenant + "}:t"
	}
	return s.prefix + kindRate + ":{" + l.Tenant + "}:u:" + l.User
}
