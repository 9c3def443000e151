package redisstore

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/convengine/engine"
	"github.com/redis/go-redis/v9"
)

// Defaults of [Options].
const (
	DefaultPrefix  = "engine:"
	DefaultTimeout = 500 * time.Millisecond
)

// Options configure a [Store]. The zero value and nil mean the defaults.
type Options struct {
	// Prefix starts every key, so that several engines, or other applications, share one
	// server; "" means DefaultPrefix.
	Prefix string
	// Timeout bounds each call, the client's retries included, whether or not the caller's
	// context has a deadline; 0 means DefaultTimeout.
	Timeout time.Duration
	// Now is the clock that expiry times are measured against; nil means time.Now. Give it the
	// engine's Config.Now. Redis keeps time itself: a record expires the given duration after
	// it was written, by the server's clock.
	Now func() time.Time
	// MaxSessionsPerUser bounds the live sessions of one user of a tenant (default 16; negative
	// means no bound): storing one more drops the user's oldest, whose next request gets 401
	// invalid_session. Sessions without [engine.Session.User] are not counted.
	MaxSessionsPerUser int
	// BlockingReads bounds the reads that wait in Redis at once for the events of a turn being
	// resumed (XREAD BLOCK), each holding one of the client's connections for up to two
	// seconds; past it, a resume looks for new events every 100 ms without holding one. 0 means
	// a quarter of the client's pool, so that resumes never take the connections the engine's
	// other calls need.
	BlockingReads int
	// SealKey, when set, seals what the store keeps of what users said and were shown: the
	// data of every turn event and every action's reply are encrypted with AES-256-GCM, under
	// a key derived from SealKey with HKDF-SHA256 for this purpose alone, and bound to the
	// record they are in. Give it the engine's Config.SigningKey, the same on every replica.
	// nil means they are stored as is. A sealed value that does not open (another key, a
	// changed byte, a value written before sealing was turned on) is never returned: its turn
	// reads as [engine.ErrTurnNotFound], its action record as an error wrapping
	// [ErrUnreadable], and the action does not run again.
	SealKey []byte
	// ReplicaAcks is how many replicas must confirm each single-use claim, passkey binding and
	// action claim and result before the call reports it (Redis WAIT, on the connection that
	// wrote it, for at most half of Timeout). Redis replicates asynchronously: a primary that
	// fails over before its replica has a claim lets the promoted replica grant it again, and
	// an action run once could run twice. A write not confirmed in time fails closed, with
	// [ErrUnavailable]. 0 means no wait. [NewFromURL] makes it 1 for a redis+sentinel URL,
	// and takes replica_acks= in any URL; while fewer replicas than this are up, actions and
	// single-use tokens are refused, so a deployment that waits for one runs two.
	ReplicaAcks int
}

// Store is an [engine.SessionStore], an [engine.ReplayStore], an [engine.ActionStore] and an
// [engine.RateLimiter] in Redis. Its methods are safe for concurrent use, and any number of
// Stores, in any number of processes, can share one server and prefix.
type Store struct {
	client  redis.UniversalClient
	inline  bool // the client ends a call at its context's deadline
	owned   bool // made by NewFromURL: Close closes it
	prefix  string
	timeout time.Duration
	now     func() time.Time
	begin   *redis.Script
	abandon *redis.Script
	finish  *redis.Script
	rate    *redis.Script
	sealer  *sealer // nil: content is stored as is
	acks    int     // replicas that confirm a single-use write

	maxPerUser int
	blocking   chan struct{} // a slot per read that may wait in Redis
}

var (
	_ engine.SessionStore = (*Store)(nil)
	_ engine.ReplayStore  = (*Store)(nil)
	_ engine.ActionStore  = (*Store)(nil)
	_ engine.RateLimiter  = (*Store)(nil)
)

// New returns a Store over client: a single server, a cluster, a ring or a failover client.
// The client stays the caller's: [Store.Close] leaves it open. Calls end at the store's
// time-out with any client; one made with ContextTimeoutEnabled also gives up its connection
// then, and saves a goroutine per call.
func New(client redis.UniversalClient, opts *Options) *Store {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Prefix == "" {
		o.Prefix = DefaultPrefix
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.MaxSessionsPerUser == 0 {
		o.MaxSessionsPerUser = 16
	}
	if o.BlockingReads <= 0 {
		o.BlockingReads = max(1, poolSize(client)/4)
	}
	return &Store{
		maxPerUser: o.MaxSessionsPerUser,
		blocking:   make(chan struct{}, o.BlockingReads),
		client:     client,
		inline:     boundsByContext(client),
		prefix:     o.Prefix,
		timeout:    o.Timeout,
		now:        o.Now,
		begin:      redis.NewScript(beginScript),
		abandon:    redis.NewScript(abandonScript),
		finish:     redis.NewScript(finishScript),
		rate:       redis.NewScript(rateScript),
		sealer:     newSealer(o.SealKey),
		acks:       o.ReplicaAcks,
	}
}

// NewFromURL returns a Store with a client of its own, which [Store.Close] closes. The URL is
// one go-redis parses: redis://[user:password@]host[:port][/db] (rediss:// for TLS,
// unix:///path for a socket), with options as query parameters (dial_timeout=1s,
// pool_size=50, …). The schemes redis+cluster:// and rediss+cluster:// make a Redis Cluster
// client; more seed nodes go in addr= parameters. The schemes redis+sentinel:// and
// rediss+sentinel:// make a client that follows Redis Sentinel to the primary of master_name
// (required) as it fails over: the host and addr= parameters are the sentinels, the user and
// password those of the sentinels, and password= (and username=) the primary's:
// redis+sentinel://sentinel-a:26379?addr=sentinel-b:26379&master_name=engine&password=…
// Any URL may add replica_acks=N, [Options.ReplicaAcks]; a redis+sentinel URL waits for one
// replica unless it says replica_acks=0. NewFromURL does not connect: the first call, or
// [Store.Ping], does.
func NewFromURL(rawURL string, opts *Options) (*Store, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		// url.Error repeats the URL, password included: keep only the reason.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return nil, fmt.Errorf("redisstore: parsing the Redis URL: %w", err)
	}
	sentinel := strings.HasSuffix(u.Scheme, "+sentinel")
	acks, err := replicaAcks(u)
	if err != nil {
		return nil, err
	}
	var client redis.UniversalClient
	switch u.Scheme {
	case "redis+cluster", "rediss+cluster":
		u.Scheme = strings.TrimSuffix(u.Scheme, "+cluster")
		o, err := redis.ParseClusterURL(u.String())
		if err != nil {
			return nil, fmt.Errorf("redisstore: parsing the Redis URL: %w", err)
		}
		o.ContextTimeoutEnabled = true
		client = redis.NewClusterClient(o)
	case "redis+sentinel", "rediss+sentinel":
		u.Scheme = strings.TrimSuffix(u.Scheme, "+sentinel")
		o, err := redis.ParseFailoverURL(u.String())
		switch {
		case err != nil:
			return nil, fmt.Errorf("redisstore: parsing the Redis URL: %w", err)
		case o.MasterName == "":
			return nil, errors.New("redisstore: a redis+sentinel URL needs master_name=, the primary's name at the sentinels")
		case o.RouteByLatency || o.RouteRandomly || o.ReplicaOnly:
			return nil, errors.New("redisstore: a redis+sentinel URL reads and writes the primary: route_by_latency, route_randomly and replica_only are not taken")
		}
		o.ContextTimeoutEnabled = true
		client = redis.NewFailoverClient(o)
	default:
		o, err := redis.ParseURL(u.String())
		if err != nil {
			return nil, fmt.Errorf("redisstore: parsing the Redis URL: %w", err)
		}
		o.ContextTimeoutEnabled = true
		client = redis.NewClient(o)
	}
	s := New(client, opts)
	s.owned = true
	switch {
	case acks >= 0:
		s.acks = acks
	case sentinel && s.acks == 0:
		s.acks = 1
	}
	return s, nil
}

// replicaAcks takes replica_acks= out of u's query, which go-redis would refuse, and returns
// it, or -1 when u has none.
func replicaAcks(u *url.URL) (int, error) {
	q := u.Query()
	if !q.Has("replica_acks") {
		return -1, nil
	}
	n, err := strconv.Atoi(q.Get("replica_acks"))
	if err != nil || n < 0 || n > 16 {
		return 0, errors.New("redisstore: replica_acks= takes a number of replicas from 0 to 16")
	}
	q.Del("replica_acks")
	u.RawQuery = q.Encode()
	return n, nil
}

// Close closes the client if [NewFromURL] made it; a client given to [New] stays open.
func (s *Store) Close() error {
	if !s.owned {
		return nil
	}
	return s.client.Close()
}

// Ping checks that the server answers, within the store's time-out. A server start can call it
// to refuse to serve without its store.
func (s *Store) Ping(ctx context.Context) error {
	_, err := do(ctx, s, func(ctx context.Context) (struct{}, error) {
		return struct{}{}, s.client.Ping(ctx).Err()
	})
	if err != nil {
		return unavailable("pinging the server", err)
	}
	return nil
}

// storeError is a sentinel error that also matches [engine.ErrStoreUnavailable].
type storeError struct{ msg string }

func (e *storeError) Error() string { return e.msg }
func (e *storeError) Unwrap() error { return engine.ErrStoreUnavailable }

// ErrUnavailable is wrapped by every error of a call that Redis did not answer: unreachable
// server, time-out, refused command. It matches [engine.ErrStoreUnavailable] too.
var ErrUnavailable error = &storeError{"redisstore: redis unavailable"}

// ErrUnreadable is wrapped by the error of a call that found a record it cannot read: written
// by a newer version of this package (during a rolling upgrade), or not a record at all. It
// matches [engine.ErrStoreUnavailable] too.
var ErrUnreadable error = &storeError{"redisstore: unreadable record"}

// unavailable wraps err, the failure of doing op, with ErrUnavailable.
func unavailable(op string, err error) error {
	return fmt.Errorf("redisstore: %s: %w: %w", op, ErrUnavailable, err)
}

// result is what a call's goroutine hands back.
type result[T any] struct {
	v   T
	err error
}

// boundsByContext reports whether client ends its calls at their context's deadline. Without
// ContextTimeoutEnabled, a go-redis client waits for a reply until its read time-out (3 s by
// default), then retries.
func boundsByContext(client redis.UniversalClient) bool {
	switch c := client.(type) {
	case *redis.Client:
		return c.Options().ContextTimeoutEnabled
	case *redis.ClusterClient:
		return c.Options().ContextTimeoutEnabled
	case *redis.Ring:
		return c.Options().ContextTimeoutEnabled
	}
	return false
}

// poolSize returns the connections client keeps per server, as go-redis defaults them.
func poolSize(client redis.UniversalClient) int {
	n := 0
	switch c := client.(type) {
	case *redis.Client:
		n = c.Options().PoolSize
	case *redis.ClusterClient:
		n = c.Options().PoolSize
	case *redis.Ring:
		n = c.Options().PoolSize
	}
	if n <= 0 {
		n = 10 * runtime.GOMAXPROCS(0)
	}
	return n
}

// do runs f with a context bounded by the store's time-out. With a client that may outlive the
// deadline, f runs on a goroutine of its own, which ends when the client gives up.
func do[T any](ctx context.Context, s *Store, f func(context.Context) (T, error)) (T, error) {
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	if s.inline {
		return f(ctx)
	}
	ch := make(chan result[T], 1)
	go func() {
		v, err := f(ctx)
		ch <- result[T]{v, err}
	}()
	select {
	case r := <-ch:
		return r.v, r.err
	case <-ctx.Done():
		var zero T
		return zero, ctx.Err()
	}
}

// Kinds of record, the second part of a key.
const (
	kindSession   = "session"
	kindUser      = "user" // the sessions of a user, by expiry
	kindReplay    = "replay"
	kindBind      = "bind" // a value bound to a key (Bind)
	kindAction    = "action"
	kindRate      = "rate"
	kindTurn      = "turn"      // a turn's events, a stream
	kindTurnMeta  = "turnmeta"  // a turn's owner and end
	kindTurnLease = "turnlease" // the lease of a turn's replica
)

// key returns the key of the record of id: the prefix, the kind, the namespace of the id (what
// precedes its last colon, such as the tenant key of "tenantKey:jti"), and the rest of the id
// as the hash tag. Distinct ids get distinct keys: the last ":{" of a key ends its namespace.
func (s *Store) key(kind, id string) string {
	if i := strings.LastIndexByte(id, ':'); i >= 0 {
		return s.prefix + kind + ":" + id[:i] + ":{" + id[i+1:] + "}"
	}
	return s.prefix + kind + ":{" + id + "}"
}

// ttl returns how long a record lasts from now until t, in whole milliseconds rounded up, or 0
// when t has passed.
func (s *Store) ttl(t time.Time) time.Duration {
	d := t.Sub(s.now())
	if d <= 0 {
		return 0
	}
	return (d + time.Millisecond - 1).Truncate(time.Millisecond)
}
