package testkit

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
)

// PostgresAvailable fails t with a message naming the Debian package when PostgreSQL's
// programs are missing, and skips it under -short.
func PostgresAvailable(t testing.TB) {
	t.Helper()
	if testing.Short() {
		t.Skip("needs PostgreSQL; skipped with -short")
	}
	if _, err := postgresBin(); err != nil {
		t.Fatal("the test runs a real PostgreSQL server, which is not installed: install the Debian package postgresql (apt-get install postgresql)")
	}
}

// StartPostgresT starts a server of t's own, stopped and removed when t ends.
func StartPostgresT(t testing.TB) *PostgresServer {
	t.Helper()
	PostgresAvailable(t)
	s, err := StartPostgres()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Remove)
	return s
}

// PostgresServer is a PostgreSQL server on a loopback port, its data, socket and log in a
// directory of its own, tuned for tests: no fsync, so that a crash of the machine (not of the
// server) loses what it kept. Its superuser is postgres, with no password.
type PostgresServer struct {
	// URL is the postgres:// URL of the server's postgres database.
	URL  string
	Dir  string
	Port int

	bin    string
	cred   *syscall.Credential // nil unless the tests run as root
	cmd    *exec.Cmd
	exited chan error
	nextDB atomic.Int64
}

// StartPostgres makes a data directory with initdb and starts a server on a free port.
// When the tests run as root, which PostgreSQL refuses, the server runs as the user nobody.
func StartPostgres() (*PostgresServer, error) {
	bin, err := postgresBin()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "pg-test-")
	if err != nil {
		return nil, err
	}
	s := &PostgresServer{Dir: dir, bin: bin}
	if os.Geteuid() == 0 {
		if s.cred, err = nobody(); err == nil {
			err = os.Chown(dir, int(s.cred.Uid), int(s.cred.Gid))
		}
		if err != nil {
			os.RemoveAll(dir)
			return nil, fmt.Errorf("running PostgreSQL as an unprivileged user: %w", err)
		}
	}
	if err := s.initdb(); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	var last error
	for range 3 { // another process may take the port between its choice and the start
		if s.Port, err = FreePort(); err != nil {
			os.RemoveAll(dir)
			return nil, err
		}
		s.URL = s.DatabaseURL("postgres")
		if last = s.Start(); last == nil {
			return s, nil
		}
	}
	os.RemoveAll(dir)
	return nil, last
}

// DatabaseURL returns the URL of the database name on the server.
func (s *PostgresServer) DatabaseURL(name string) string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/%s?sslmode=disable", s.Port, name)
}

// NewDatabase creates an empty database on the server and returns its URL, so that the tests
// of one server do not see each other's tables.
func (s *PostgresServer) NewDatabase(t testing.TB) string {
	t.Helper()
	name := fmt.Sprintf("test_%d", s.nextDB.Add(1))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := pgconn.Connect(ctx, s.URL)
	if err != nil {
		t.Fatalf("connecting to PostgreSQL: %v", err)
	}
	defer c.Close(ctx)
	if _, err := c.Exec(ctx, "CREATE DATABASE "+name).ReadAll(); err != nil {
		t.Fatalf("creating database %s: %v", name, err)
	}
	return s.DatabaseURL(name)
}

// Start starts the server, again after Stop, on the same port, and waits until it takes
// connections.
func (s *PostgresServer) Start() error {
	logf, err := os.OpenFile(filepath.Join(s.Dir, "postgres.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer logf.Close()
	s.cmd = s.command(filepath.Join(s.bin, "postgres"), "-D", filepath.Join(s.Dir, "data"),
		"-p", strconv.Itoa(s.Port), "-k", s.Dir, "-c", "listen_addresses=127.0.0.1",
		"-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off")
	s.cmd.Stdout, s.cmd.Stderr = logf, logf
	if err := s.cmd.Start(); err != nil {
		return fmt.Errorf("starting postgres: %w", err)
	}
	s.exited = make(chan error, 1)
	go func(cmd *exec.Cmd, exited chan<- error) { exited <- cmd.Wait() }(s.cmd, s.exited)
	if err := s.waitReady(); err != nil {
		s.Stop()
		log, _ := os.ReadFile(filepath.Join(s.Dir, "postgres.log"))
		return fmt.Errorf("postgres on port %d: %w\n%s", s.Port, err, lastLines(string(log), 10))
	}
	return nil
}

// Stop shuts the server down as an operator would (fast shutdown: clients are disconnected,
// transactions in flight roll back) and waits until it has.
func (s *PostgresServer) Stop() {
	if s.cmd == nil {
		return
	}
	// The server runs as another user when the tests run as root, which may still signal it.
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGQUIT, syscall.SIGKILL} {
		s.cmd.Process.Signal(sig)
		select {
		case <-s.exited:
			s.cmd = nil
			return
		case <-time.After(10 * time.Second):
		}
	}
	<-s.exited
	s.cmd = nil
}

// Remove stops the server and deletes its directory.
func (s *PostgresServer) Remove() {
	s.Stop()
	os.RemoveAll(s.Dir)
}

// initdb makes the data directory: trust on loopback, no sync, no locale.
func (s *PostgresServer) initdb() error {
	cmd := s.command(filepath.Join(s.bin, "initdb"), "-D", filepath.Join(s.Dir, "data"),
		"-U", "postgres", "--auth=trust", "--no-sync", "--no-locale", "-E", "UTF8")
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("initdb: %w\n%s", err, lastLines(string(out), 10))
	}
	return nil
}

// command runs a PostgreSQL program as the server's user, in the C locale.
func (s *PostgresServer) command(name string, args ...string) *exec.Cmd {
	cmd := exec.Command(name, args...)
	cmd.Dir = s.Dir
	cmd.Env = []string{"LC_ALL=C", "PATH=" + os.Getenv("PATH"), "HOME=" + s.Dir}
	if s.cred != nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: s.cred}
	}
	return cmd
}

// waitReady connects until the server takes connections (it refuses them while starting up).
func (s *PostgresServer) waitReady() error {
	deadline := time.Now().Add(30 * time.Second)
	for {
		select {
		case err := <-s.exited:
			s.exited <- err
			return fmt.Errorf("exited at start: %v", err)
		default:
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		c, err := pgconn.Connect(ctx, s.URL)
		if err == nil {
			c.Close(ctx)
			cancel()
			return nil
		}
		cancel()
		if time.Now().After(deadline) {
			return fmt.Errorf("no connection within 30 s: %w", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// postgresBin returns the directory of PostgreSQL's programs: Debian's newest under
// /usr/lib/postgresql, else the one on PATH.
func postgresBin() (string, error) {
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	slices.SortFunc(dirs, func(a, b string) int { return pgMajor(b) - pgMajor(a) })
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, "initdb")); err == nil {
			return d, nil
		}
	}
	if p, err := exec.LookPath("initdb"); err == nil {
		return filepath.Dir(p), nil
	}
	return "", errors.New("PostgreSQL's initdb is not installed")
}

func pgMajor(bin string) int {
	n, _ := strconv.Atoi(filepath.Base(filepath.Dir(bin)))
	return n
}

// nobody returns the credential of the user nobody, whom root's tests run PostgreSQL as.
func nobody() (*syscall.Credential, error) {
	u, err := user.Lookup("nobody")
	if err != nil {
		return nil, err
	}
	uid, err1 := strconv.ParseUint(u.Uid, 10, 32)
	gid, err2 := strconv.ParseUint(u.Gid, 10, 32)
	if err := errors.Join(err1, err2); err != nil {
		return nil, err
	}
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid), Groups: []uint32{}}, nil
}
