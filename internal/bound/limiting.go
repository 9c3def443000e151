package bound

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"hash"
	"io"
	"sync"
	"sync/atomic"
	"time"
)

// UserNames names the token buckets of users: a keyed hash of the tenant and the user's token,
// 32 hex digits, the same on every replica that shares the key, and of no use to find the
// token from. Its methods may be called from many goroutines at once.
type UserNames struct {
	key  []byte
	macs sync.Pool // of hash.Hash keyed with key: a new one costs five allocations
}

// NewUserNames returns the names keyed with key.
func NewUserNames(key []byte) *UserNames { return &UserNames{key: key} }

// Name returns the name of the bucket of the user of token in tenant.
func (u *UserNames) Name(tenant, token string) string {
	mac, _ := u.macs.Get().(hash.Hash)
	if mac == nil {
		mac = hmac.New(sha256.New, u.key)
	}
	io.WriteString(mac, tenant)
	mac.Write([]byte{0})
	io.WriteString(mac, token)
	var sum [sha256.Size]byte
	var name [32]byte
	hex.Encode(name[:], mac.Sum(sum[:0])[:16])
	mac.Reset()
	u.macs.Put(mac)
	return string(name[:])
}

// Fallback applies rate limits L with a shared limiter when there is one, else, and for Pause
// after it failed, with a local one, rather than wait for a failing limiter on every request.
// Its methods may be called from many goroutines at once; its fields are set before.
type Fallback[L any] struct {
	// Shared asks the shared limiter; nil means there is none. An error means it could not
	// decide, and took nothing.
	Shared func(ctx context.Context, limits []L) (bool, time.Duration, error)
	// Local asks the process's own buckets.
	Local func(ctx context.Context, limits []L) (bool, time.Duration)
	// Pause is how long the local limiter decides alone after the shared one failed.
	Pause time.Duration

	pause atomic.Int64 // until when (Unix ns) the shared limiter is not asked
}

// Allow asks the shared limiter, or the local one when there is none or the shared one failed
// less than Pause before now (unavailable is then true). Of the calls that see the shared
// limiter fail together, one pauses it and is told with failed. A call whose ctx ends while
// the shared limiter is asked is allowed: nothing is known about the limiter then.
func (f *Fallback[L]) Allow(ctx context.Context, now time.Time, limits []L, failed func(error)) (ok bool, wait time.Duration, unavailable bool) {
	if f.Shared != nil {
		if paused := f.pause.Load(); now.UnixNano() >= paused {
			ok, wait, err := f.Shared(ctx, limits)
			if err == nil {
				return ok, wait, false
			}
			if ctx.Err() != nil {
				return true, 0, false
			}
			if f.pause.CompareAndSwap(paused, now.Add(f.Pause).UnixNano()) {
				failed(err)
			}
		}
		unavailable = true
	}
	ok, wait = f.Local(ctx, limits)
	return ok, wait, unavailable
}
