package redisstore_test

import (
	"bufio"
	"context"
	"errors"
	"flag"
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
	"go.uber.org/goleak"
)

// The servers every test shares: a standalone one, and a one-node Redis Cluster that owns every
// slot (which refuses a command touching keys of two slots as a real cluster does).
var (
	standalone  *redisServer
	clusterNode *redisServer
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
	if standalone, err = startRedis(false); err == nil {
		clusterNode, err = startRedis(true)
	}
	code := 1
	if err != nil {
		fmt.Fprintln(os.Stderr, "redisstore:", err)
	} else {
		code = m.Run()
	}
	for _, s := range []*redisServer{standalone, clusterNode} {
		if s != nil {
			s.Stop()
			os.RemoveAll(s.dir)
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

// redisServer is a redis-server process on a loopback port, in a directory of its own, that
// saves nothing to disk.
type redisServer struct {
	Addr    string
	dir     string
	cluster bool
	cmd     *exec.Cmd
	exited  chan error
}

// startRedis starts a server on a free port.
func startRedis(cluster bool) (*redisServer, error) {
	dir, err := os.MkdirTemp("", "redisstore-test-")
	if err != nil {
		return nil, err
	}
	var last error
	for range 3 { // another process may take the port between its choice and the start
		port, err := freePort()
		if err != nil {
			return nil, err
		}
		s := &redisServer{Addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), dir: dir, cluster: cluster}
		if last = s.Start(); last == nil {
			return s, nil
		}
	}
	os.RemoveAll(dir)
	return nil, last
}

// startTestRedis starts a server of t's own, stopped when t ends.
func startTestRedis(t *testing.T) *redisServer {
	t.Helper()
	needRedis(t)
	s, err := startRedis(false)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		s.Stop()
		os.RemoveAll(s.dir)
	})
	return s
}

func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// Start starts the server, again after Stop, on the same port, and waits until it answers.
func (s *redisServer) Start() error {
	_, port, _ := net.SplitHostPort(s.Addr)
	args := []string{"--port", port, "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
		"--dir", s.dir, "--logfile", filepath.Join(s.dir, "redis.log"), "--daemonize", "no"}
	if s.cluster {
		args = append(args, "--cluster-enabled", "yes", "--cluster-config-file", filepath.Join(s.dir, "nodes.conf"))
	}
	s.cmd = exec.Command("redis-server", args...)
	if err := s.cmd.Start(); err != nil {
		return fmt.Errorf("starting redis-server: %w", err)
	}
	s.exited = make(chan error, 1)
	go func(cmd *exec.Cmd, exited chan<- error) { exited <- cmd.Wait() }(s.cmd, s.exited)
	if err := s.waitReady(); err != nil {
		s.Stop()
		log, _ := os.ReadFile(filepath.Join(s.dir, "redis.log"))
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

// Stop ends the server and waits until it has.
func (s *redisServer) Stop() {
	if s.cmd == nil {
		return
	}
	s.cmd.Process.Kill()
	<-s.exited
	s.cmd = nil
}

// waitReady polls the server with PING until it answers PONG.
func (s *redisServer) waitReady() error {
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
func (s *redisServer) assignSlots() error {
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

// client returns a client of s, closed when t ends.
func (s *redisServer) client(t testing.TB) *redis.Client {
	c := redis.NewClient(&redis.Options{Addr: s.Addr, ContextTimeoutEnabled: true})
	t.Cleanup(func() { c.Close() })
	return c
}

// clusterClient returns a Redis Cluster client of s, closed when t ends.
func (s *redisServer) clusterClient(t testing.TB) *redis.ClusterClient {
	c := redis.NewClusterClient(&redis.ClusterOptions{Addrs: []string{s.Addr}, ContextTimeoutEnabled: true})
	t.Cleanup(func() { c.Close() })
	return c
}
