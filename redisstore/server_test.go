package redisstore_test

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/convengine/engine/internal/testkit"
	"go.uber.org/goleak"
)

// The servers every test shares: a standalone one, and a one-node Redis Cluster that owns every
// slot (which refuses a command touching keys of two slots as a real cluster does).
var (
	standalone  *testkit.RedisServer
	clusterNode *testkit.RedisServer
)

func TestMain(m *testing.M) {
	flag.Parse()
	if testing.Short() || isFuzzWorker() {
		os.Exit(m.Run())
	}
	if _, err := exec.LookPath("redis-server"); err != nil {
		fmt.Fprintln(os.Stderr, "redisstore: the tests run a real redis-server, which is not installed: install the Debian package redis-server (apt-get install redis-server), or run go test -short")
		os.Exit(1)
	}
	var err error
	if standalone, err = testkit.StartRedis(false); err == nil {
		clusterNode, err = testkit.StartRedis(true)
	}
	code := 1
	if err != nil {
		fmt.Fprintln(os.Stderr, "redisstore:", err)
	} else {
		code = m.Run()
	}
	for _, s := range []*testkit.RedisServer{standalone, clusterNode} {
		if s != nil {
			s.Remove()
		}
	}
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "redisstore: leaked goroutines:", err)
			code = 1
		}
	}
	os.Exit(code)
}

// isFuzzWorker reports whether this process only runs fuzz inputs, which need no server.
func isFuzzWorker() bool {
	f := flag.Lookup("test.fuzzworker")
	return f != nil && f.Value.String() == "true"
}

// needRedis skips a test under -short.
func needRedis(t testing.TB) {
	t.Helper()
	if testing.Short() {
		t.Skip("needs redis-server; skipped with -short")
	}
}

// startTestRedis starts a server of t's own, stopped when t ends.
func startTestRedis(t *testing.T) *testkit.RedisServer { return testkit.StartRedisT(t) }

// client returns a client of s, closed when t ends.
func client(t testing.TB, s *testkit.RedisServer) *redis.Client {
	c := redis.NewClient(&redis.Options{Addr: s.Addr, ContextTimeoutEnabled: true})
	t.Cleanup(func() { c.Close() })
	return c
}

// clusterClient returns a Redis Cluster client of s, closed when t ends.
func clusterClient(t testing.TB, s *testkit.RedisServer) *redis.ClusterClient {
	c := redis.NewClusterClient(&redis.ClusterOptions{Addrs: []string{s.Addr}, ContextTimeoutEnabled: true})
	t.Cleanup(func() { c.Close() })
	return c
}

// generous bounds store calls in tests that check semantics, not time-outs: the race detector
// on a busy two-core machine can hold a hundred concurrent callers back for longer than the
// default.
const generous = 5 * time.Second
