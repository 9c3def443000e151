package testkit

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// MasterName is the name under which a [RedisFailover]'s sentinels know its primary.
const MasterName = "engine"

// RedisFailover is Redis as a deployment that survives its primary: a primary, a replica of it,
// and three Redis Sentinels (quorum two) that promote the replica when the primary has not
// answered for a second, all on loopback ports.
type RedisFailover struct {
	Primary, Replica *RedisServer
	Sentinels        []*RedisServer
}

// SentinelAvailable fails t with a message naming the Debian packages when redis-server or
// redis-sentinel is missing, and skips it under -short.
func SentinelAvailable(t testing.TB) {
	t.Helper()
	RedisAvailable(t)
	if _, err := exec.LookPath("redis-sentinel"); err != nil {
		t.Fatal("the test runs real Redis Sentinels, which are not installed: install the Debian package redis-sentinel (apt-get install redis-sentinel)")
	}
}

// StartRedisFailoverT starts a RedisFailover of t's own, stopped and removed when t ends.
func StartRedisFailoverT(t testing.TB) *RedisFailover {
	t.Helper()
	SentinelAvailable(t)
	f, err := StartRedisFailover()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(f.Remove)
	return f
}

// StartRedisFailover starts a primary, its replica and three sentinels watching them, and
// waits until the sentinels know the replica.
func StartRedisFailover() (*RedisFailover, error) {
	f := &RedisFailover{}
	var err error
	// A primary waits 5 s by default before it syncs a replica, for others to join it.
	now := []string{"--repl-diskless-sync-delay", "0"}
	if f.Primary, err = startRedis(false, now...); err != nil {
		return nil, err
	}
	host, port, _ := net.SplitHostPort(f.Primary.Addr)
	if f.Replica, err = startRedis(false, append(now, "--replicaof", host, port)...); err != nil {
		f.Remove()
		return nil, err
	}
	for range 3 {
		s, err := startSentinel(f.Primary.Addr)
		if err != nil {
			f.Remove()
			return nil, err
		}
		f.Sentinels = append(f.Sentinels, s)
	}
	if err := f.waitReplica(10 * time.Second); err != nil {
		f.Remove()
		return nil, err
	}
	return f, nil
}

// startSentinel starts redis-sentinel on a free port, watching primary. A sentinel rewrites its
// configuration file as it learns the deployment, so each has one of its own.
func startSentinel(primary string) (*RedisServer, error) {
	dir, err := os.MkdirTemp("", "redis-sentinel-")
	if err != nil {
		return nil, err
	}
	host, port, _ := net.SplitHostPort(primary)
	var last error
	for range 3 {
		p, err := FreePort()
		if err != nil {
			return nil, err
		}
		conf := filepath.Join(dir, "sentinel.conf")
		text := fmt.Sprintf("port %d\nbind 127.0.0.1\ndir %s\nlogfile %s\n"+
			"sentinel monitor %s %s %s 2\nsentinel down-after-milliseconds %[4]s 1000\n"+
			"sentinel failover-timeout %[4]s 5000\nsentinel parallel-syncs %[4]s 1\n",
			p, dir, filepath.Join(dir, "sentinel.log"), MasterName, host, port)
		if err := os.WriteFile(conf, []byte(text), 0o600); err != nil {
			return nil, err
		}
		s := &RedisServer{Addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(p)), Dir: dir, sentinelConf: conf}
		if last = s.Start(); last == nil {
			return s, nil
		}
	}
	os.RemoveAll(dir)
	return nil, last
}

// URL is the engine's Redis URL for the deployment: its sentinels and the primary's name.
func (f *RedisFailover) URL() string {
	u := "redis+sentinel://" + f.Sentinels[0].Addr + "?master_name=" + MasterName
	for _, s := range f.Sentinels[1:] {
		u += "&addr=" + s.Addr
	}
	return u
}

// PrimaryAddr asks the sentinels which server is the primary now.
func (f *RedisFailover) PrimaryAddr(ctx context.Context) (string, error) {
	var last error
	for _, s := range f.Sentinels {
		c := redis.NewSentinelClient(&redis.Options{Addr: s.Addr})
		addr, err := c.GetMasterAddrByName(ctx, MasterName).Result()
		c.Close()
		if err == nil && len(addr) == 2 {
			return net.JoinHostPort(addr[0], addr[1]), nil
		}
		last = err
	}
	return "", fmt.Errorf("no sentinel names the primary: %v", last)
}

// WaitFailover waits until the sentinels name a primary other than old, and it answers as one.
func (f *RedisFailover) WaitFailover(ctx context.Context, old string, timeout time.Duration) (string, error) {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if addr, err := f.PrimaryAddr(ctx); err == nil && addr != old {
			c := redis.NewClient(&redis.Options{Addr: addr})
			role, err := c.Do(ctx, "ROLE").Slice()
			c.Close()
			if err == nil && len(role) > 0 && role[0] == "master" {
				return addr, nil
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	return "", fmt.Errorf("no failover from %s within %v; the sentinels logged:\n%s", old, timeout, f.sentinelLines())
}

// waitReplica waits until the replica is in sync with the primary and confirms its writes,
// and every sentinel knows it, which it must to promote it.
func (f *RedisFailover) waitReplica(timeout time.Duration) error {
	ctx := context.Background()
	deadline := time.Now().Add(timeout)
	rc := redis.NewClient(&redis.Options{Addr: f.Replica.Addr})
	defer rc.Close()
	for {
		info, err := rc.Info(ctx, "replication").Result()
		if err == nil && strings.Contains(info, "master_link_status:up") {
			break
		}
		if time.Now().After(deadline) {
			log, _ := os.ReadFile(filepath.Join(f.Replica.Dir, "redis.log"))
			return fmt.Errorf("the replica is not in sync after %v:\n%s\nits log:\n%s\nthe sentinels':\n%s", timeout, info, lastLines(string(log), 15), f.sentinelLines())
		}
		time.Sleep(20 * time.Millisecond)
	}
	// The primary streams writes to a replica that loaded its snapshot only once the replica
	// acknowledges it, which it does once a second: until then WAIT gets no answer from it.
	pc := redis.NewClient(&redis.Options{Addr: f.Primary.Addr})
	defer pc.Close()
	for {
		var wait *redis.IntCmd
		_, err := pc.Pipelined(ctx, func(p redis.Pipeliner) error {
			p.Set(ctx, "testkit:ready", "1", time.Minute)
			wait = redis.NewIntCmd(ctx, "wait", 1, 100)
			return p.Process(ctx, wait)
		})
		if err == nil && wait.Val() == 1 {
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the replica %s does not confirm writes after %v: %v", f.Replica.Addr, timeout, err)
		}
	}
	for _, s := range f.Sentinels {
		c := redis.NewSentinelClient(&redis.Options{Addr: s.Addr})
		for {
			replicas, err := c.Replicas(ctx, MasterName).Result()
			if err == nil && knows(replicas, f.Replica.Addr) {
				break
			}
			if time.Now().After(deadline) {
				c.Close()
				return fmt.Errorf("the sentinels do not know the replica %s after %v: %v %v", f.Replica.Addr, timeout, replicas, err)
			}
			time.Sleep(50 * time.Millisecond)
		}
		c.Close()
	}
	return nil
}

// Remove stops every server and deletes their directories.
func (f *RedisFailover) Remove() {
	for _, s := range append([]*RedisServer{f.Primary, f.Replica}, f.Sentinels...) {
		if s != nil {
			s.Remove()
		}
	}
}

// sentinelLines is what the sentinels logged, for a failure's message.
func (f *RedisFailover) sentinelLines() string {
	var b strings.Builder
	for _, s := range f.Sentinels {
		log, _ := os.ReadFile(filepath.Join(s.Dir, "sentinel.log"))
		b.WriteString(lastLines(string(log), 5) + "\n")
	}
	return b.String()
}

// Failover kills the primary (SIGKILL), waits until the sentinels have promoted the replica,
// then starts the old primary again as the new primary's replica (as its configuration,
// rewritten by the sentinels, would). It returns how long the promotion took after the kill.
// Before failing over again, wait for [RedisFailover.Ready].
func (f *RedisFailover) Failover(ctx context.Context) (time.Duration, error) {
	old, err := f.PrimaryAddr(ctx)
	if err != nil {
		return 0, err
	}
	if old != f.Primary.Addr {
		f.Primary, f.Replica = f.Replica, f.Primary
	}
	f.Primary.Stop()
	killed := time.Now()
	if _, err := f.WaitFailover(ctx, old, 30*time.Second); err != nil {
		return 0, err
	}
	return time.Since(killed), f.Rejoin()
}

// Rejoin starts the primary killed by a failover again, as the new primary's replica (as its
// configuration, rewritten by the sentinels, would), and swaps the roles' fields. Call it once
// [RedisFailover.WaitFailover] has seen the promotion.
func (f *RedisFailover) Rejoin() error {
	f.Primary, f.Replica = f.Replica, f.Primary
	host, port, _ := net.SplitHostPort(f.Primary.Addr)
	f.Replica.args = []string{"--repl-diskless-sync-delay", "0", "--replicaof", host, port}
	return f.Replica.Start()
}

// Ready waits up to timeout until the replica is in sync with the primary and every sentinel
// knows it, as a failover needs.
func (f *RedisFailover) Ready(timeout time.Duration) error { return f.waitReplica(timeout) }

// knows reports whether the sentinel's replicas hold addr as a replica that is up.
func knows(replicas []map[string]string, addr string) bool {
	for _, r := range replicas {
		if net.JoinHostPort(r["ip"], r["port"]) == addr && r["flags"] == "slave" {
			return true
		}
	}
	return false
}
