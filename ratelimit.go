package engine

import (
	"context"
	"time"

	"github.com/convengine/engine/internal/bound"
	"github.com/convengine/engine/internal/token"
)

// Bounds of admission control.
const (
	// rateLimiterPause is how long the engine decides with its own buckets after the shared
	// rate limiter failed, rather than wait for it on every request.
	rateLimiterPause = time.Second
	// The bucket of create-session of each user of a tenant without Limits.UserPerMinute: a
	// burst no client that keeps its session meets, and one more a second after it.
	defaultSessionsPerMinute = 60
	defaultSessionBurst      = 20
)

// A RateLimit is one token bucket a request takes from: its tenant's or its user's.
type RateLimit struct {
	// Tenant is the key of the tenant the bucket belongs to. The buckets of one call to
	// [RateLimiter.Allow] all belong to one tenant.
	Tenant string
	// User names a user's bucket: a keyed hash of the tenant and the user's token, 32 hex
	// digits, never the token itself. "" names the tenant's bucket.
	User string
	// PerMinute is how many requests the bucket gives per minute, evenly spread; Burst is how
	// many it holds, so how many may come at once (at least 1).
	PerMinute int
	Burst     int
}

// A RateLimiter keeps the token buckets of tenants and users. Its methods are called from many
// goroutines at once; with several engine replicas, one that all of them share (such as
// redisstore's) makes a tenant's limits hold across the deployment rather than per replica.
type RateLimiter interface {
	// Allow takes one request from every bucket of limits, or from none of them when any is
	// empty: it then reports false and how long until every one of them can give a request.
	// It is atomic: concurrent calls are never allowed more than the buckets hold. A bucket
	// not seen before, or idle long enough, is full; a bucket whose PerMinute or Burst changed
	// takes the new values from then on.
	//
	// An error means the limiter could not decide, and took nothing; a limiter whose backend
	// cannot be reached returns an error wrapping [ErrStoreUnavailable]. The engine then
	// decides with buckets of its own process, for a second, and tries the limiter again.
	Allow(ctx context.Context, limits []RateLimit) (ok bool, retryAfter time.Duration, err error)
}

// RateLimitEvent describes a request that a rate limit refused, or that the engine checked
// against its own buckets because the shared [RateLimiter] failed.
type RateLimitEvent struct {
	RequestID   string
	Tenant      string
	Environment string
	// Limited is true when the request was refused (429).
	Limited bool
	// Unavailable is true when Config.RateLimiter failed, or failed less than a second ago, and
	// the request was checked against this process's own buckets instead.
	Unavailable bool
	// RetryAfter is how long the refused request was told to wait.
	RetryAfter time.Duration
}

// rateLimiting applies the rate limits of tenants and users: with the shared limiter of
// Config.RateLimiter when there is one, else, and while it fails, with buckets in memory.
type rateLimiting struct {
	users  *bound.UserNames
	limits bound.Fallback[RateLimit]
}

func newRateLimiting(shared RateLimiter, signingKey []byte, now func() time.Time) (*rateLimiting, error) {
	key, err := token.Derive(signingKey, token.PurposeRateLimit)
	if err != nil {
		return nil, err
	}
	local := &MemoryRateLimiter{Now: now}
	rl := &rateLimiting{users: bound.NewUserNames(key), limits: bound.Fallback[RateLimit]{Pause: rateLimiterPause,
		Local: func(ctx context.Context, l []RateLimit) (bool, time.Duration) {
			ok, wait, _ := local.Allow(ctx, l)
			return ok, wait
		}}}
	if shared != nil {
		rl.limits.Shared = shared.Allow
	}
	return rl, nil
}

// userBucket returns the name of the bucket of the user of token: the same on every replica
// that shares the signing key, and of no use to find the token from.
func (rl *rateLimiting) userBucket(tenantKey string, token Secret) string {
	return rl.users.Name(tenantKey, string(token))
}

// allow asks the shared limiter, or the local one when there is none or the shared one failed
// a moment ago (unavailable is then true).
func (rl *rateLimiting) allow(ctx context.Context, e *Engine, req *request, limits []RateLimit) (ok bool, wait time.Duration, unavailable bool) {
	return rl.limits.Allow(ctx, e.now(), limits, func(err error) {
		e.log.WarnContext(ctx, "rate limiter unavailable; this process applies the limits alone for a second",
			"requestId", req.ID, "tenant", req.Tenant.Key, "err", err)
	})
}

// MemoryRateLimiter is a [RateLimiter] in this process's memory, for a single replica. It keeps
// at most Max buckets, the least recently used dropped first. A dropped bucket starts again
// full, as does one that was idle long enough to refill: dropping never makes a limit
// stricter. The zero value is ready to use.
type MemoryRateLimiter struct {
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Max bounds the buckets kept; 0 means 65 536.
	Max int

	buckets bound.Buckets
}

var _ RateLimiter = (*MemoryRateLimiter)(nil)

// Allow takes one request from every bucket of limits, or from none. It never fails.
func (m *MemoryRateLimiter) Allow(_ context.Context, limits []RateLimit) (bool, time.Duration, error) {
	now := clock(m.Now)
	var buf [2]bound.BucketLimit // a request takes from two buckets
	ls := buf[:0]
	for _, l := range limits {
		ls = append(ls, bound.BucketLimit{Key: bound.BucketKey{Tenant: l.Tenant, User: l.User}, PerMinute: l.PerMinute, Burst: l.Burst})
	}
	ok, wait := m.buckets.Allow(now, m.Max, ls)
	return ok, wait, nil
}

// Len returns how many buckets are kept.
func (m *MemoryRateLimiter) Len() int { return m.buckets.Len() }
