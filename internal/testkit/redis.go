package testkit

import (
	"bufio"
	"context"
	"errors"
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

// RedisAvailable fails t with a message naming the Debian package when redis-server is
// missing, and skips it under -short.
func RedisAvailable(t testing.TB) {
	t.Helper()
	if testing.Short() {
		t.Skip("needs redis-server; skipped with -short")
	}
	if _, err := exec.LookPath("redis-server"); err != nil {
		t.Fatal("the test runs a real redis-server, which is not installed: install the Debian package redis-server (apt-get install redis-server)")
	}
}

// StartRedisT starts a standalone server of t's own, stopped and removed when t ends.
func StartRedisT(t testing.TB) *RedisServer {
	t.Helper()
	RedisAvailable(t)
	s, err := StartRedis(false)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Remove)
	return s
}

// Remove stops the server and deletes its directory.
func (s *RedisServer) Remove() {
	s.Stop()
	os.RemoveAll(s.Dir)
}

// RedisServer is a redis-server process on a loopback port, in a directory of its own, that
// saves nothing to disk.
type RedisServer struct {
	Addr    string
	Dir     string
	cluster bool
	args    []string // more of redis-server's arguments, such as --replicaof
	// sentinelConf makes the server a sentinel, with this configuration file.
	sentinelConf string
	cmd          *exec.Cmd
	exited       chan error
}

// StartRedis starts a server on a free port.
func StartRedis(cluster bool) (*RedisServer, error) {
	return startRedis(cluster)
}

// startRedis starts a server on a free port with more arguments.
func startRedis(cluster bool, args ...string) (*RedisServer, error) {
	dir, err := os.MkdirTemp("", "redisstore-test-")
	if err != nil {
		return nil, err
	}
	var last error
	for range 3 { // another process may take the port between its choice and the start
		port, err := FreePort()
		if err != nil {
			return nil, err
		}
		s := &RedisServer{Addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), Dir: dir, cluster: cluster, args: args}
		if last = s.Start(); last == nil {
			return s, nil
		}
	}
	os.RemoveAll(dir)
	return nil, last
}

// FreePort returns a loopback port that was free a moment ago.
func FreePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// Start starts the server, again after Stop, on the same port, and waits until it answers.
func (s *RedisServer) Start() error {
	if s.sentinelConf != "" {
		return s.startSentinel()
	}
	_, port, _ := net.SplitHostPort(s.Addr)
	args := []string{"--port", port, "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
		"--dir", s.Dir, "--logfile", filepath.Join(s.Dir, "redis.log"), "--daemonize", "no"}
	if s.cluster {
		args = append(args, "--cluster-enabled", "yes", "--cluster-config-file", filepath.Join(s.Dir, "nodes.conf"))
	}
	s.cmd = exec.Command("redis-server", append(args, s.args...)...)
	if err := s.cmd.Start(); err != nil {
		return fmt.Errorf("starting redis-server: %w", err)
	}
	s.exited = make(chan error, 1)
	go func(cmd *exec.Cmd, exited chan<- error) { exited <- cmd.Wait() }(s.cmd, s.exited)
	if err := s.waitReady(); err != nil {
		s.Stop()
		log, _ := os.ReadFile(filepath.Join(s.Dir, "redis.log"))
		return fmt.Errorf("redis-server on %s: %w\n%s", s.Addr, err, lastLines(string(log), 10))
	}
	if s.cluster {
		if err := s.assignSlots(); err != nil {
			s.Stop()
			return err
		}
	}
	return nil
}

// startSentinel starts the server as a sentinel, and waits until it answers.
func (s *RedisServer) startSentinel() error {
	s.cmd = exec.Command("redis-sentinel", s.sentinelConf)
	if err := s.cmd.Start(); err != nil {
		return fmt.Errorf("starting redis-sentinel: %w", err)
	}
	s.exited = make(chan error, 1)
	go func(cmd *exec.Cmd, exited chan<- error) { exited <- cmd.Wait() }(s.cmd, s.exited)
	if err := s.waitReady(); err != nil {
		s.Stop()
		log, _ := os.ReadFile(filepath.Join(s.Dir, "sentinel.log"))
		return fmt.Errorf("redis-sentinel on %s: %w\n%s", s.Addr, err, lastLines(string(log), 10))
	}
	return nil
}

// Stop ends the server and waits until it has.
func (s *RedisServer) Stop() {
	if s.cmd == nil {
		return
	}
	s.cmd.Process.Kill()
	<-s.exited
	s.cmd = nil
}

// waitReady polls the server with PING until it answers PONG.
func (s *RedisServer) waitReady() error {
	deadline := time.Now().Add(10 * time.Second)
	for {
		select {
		case err := <-s.exited:
			s.exited <- err
			return fmt.Errorf("exited at start: %v", err)
		default:
		}
		if ping(s.Addr) == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return errors.New("no answer within 10 s")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func ping(addr string) error {
	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(time.Second))
	if _, err := c.Write([]byte("PING\r\n")); err != nil {
		return err
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		return err
	}
	if line != "+PONG\r\n" {
		return fmt.Errorf("PING answered %q", line)
	}
	return nil
}

// assignSlots gives every slot to the one node, and waits until the cluster is up.
func (s *RedisServer) assignSlots() error {
	c := redis.NewClient(&redis.Options{Addr: s.Addr})
	defer c.Close()
	ctx := context.Background()
	if err := c.Do(ctx, "CLUSTER", "ADDSLOTSRANGE", 0, 16383).Err(); err != nil {
		return fmt.Errorf("assigning the cluster's slots: %w", err)
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		info, err := c.ClusterInfo(ctx).Result()
		if err == nil && strings.Contains(info, "cluster_state:ok") {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the cluster is not up after 10 s: %v %s", err, info)
		}
	}
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
