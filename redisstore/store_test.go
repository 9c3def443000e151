package redisstore_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/convengine/engine"
	"github.com/convengine/engine/enginetest"
	"github.com/convengine/engine/internal/testkit"
	"github.com/convengine/engine/redisstore"
	"github.com/redis/go-redis/v9"
)

// backends are the two kinds of deployment every check runs on.
func backends(t *testing.T) map[string]func(t testing.TB) redis.UniversalClient {
	needRedis(t)
	return map[string]func(t testing.TB) redis.UniversalClient{
		"standalone": func(t testing.TB) redis.UniversalClient { return client(t, standalone) },
		"cluster":    func(t testing.TB) redis.UniversalClient { return clusterClient(t, clusterNode) },
	}
}

// prefix returns a key prefix of t's own, so that tests sharing a server see nothing of each
// other.
func prefix(t testing.TB) string {
	return "test:" + strings.NewReplacer("{", "(", "}", ")").Replace(t.Name()) + ":"
}

func TestSuite(t *testing.T) {
	for name, client := range backends(t) {
		t.Run(name, func(t *testing.T) {
			enginetest.StoreSuite{New: func(t *testing.T) enginetest.Store {
				return redisstore.New(client(t), &redisstore.Options{Prefix: prefix(t), Timeout: generous})
			}, TurnLog: func(t *testing.T) engine.TurnLog {
				return redisstore.New(client(t), &redisstore.Options{Prefix: prefix(t), Timeout: generous})
			}}.Run(t)
		})
	}
}

// TestRecords reads records as a release that wrote them left them, and refuses records of a
// release that is newer.
func TestRecords(t *testing.T) {
	for name, newClient := range backends(t) {
		t.Run(name, func(t *testing.T) {
			ctx := t.Context()
			raw := newClient(t)
			p := prefix(t)
			s := redisstore.New(raw, &redisstore.Options{Prefix: p, Timeout: generous})
			set := func(key, value string) {
				t.Helper()
				if err := raw.Set(ctx, p+key, value, time.Hour).Err(); err != nil {
					t.Fatal(err)
				}
			}
			get := func(key string) string {
				t.Helper()
				v, err := raw.Get(ctx, p+key).Result()
				if err != nil && !errors.Is(err, redis.Nil) {
					t.Fatal(err)
				}
				return v
			}

			// Version 1, as written by the first release, with a field a later release of the
			// same version may add: read, the unknown field ignored.
			set("session:{old}", `{"v":1,"session":{"ID":"old","TenantKey":"pk_demo","CreatedAt":"2030-01-01T10:00:00Z","ExpiresAt":"2099-01-01T10:00:00Z","KeyThumbprint":"tp","Metadata":{"app":"1.0"},"Added":"later"}}`)
			got, err := s.Session(ctx, "old")
			if err != nil {
				t.Fatal(err)
			}
			if got.ID != "old" || got.TenantKey != "pk_demo" || got.KeyThumbprint != "tp" || string(got.Metadata) != `{"app":"1.0"}` ||
				!got.ExpiresAt.Equal(time.Date(2099, 1, 1, 10, 0, 0, 0, time.UTC)) {
				t.Errorf("old session read as %+v", got)
			}
			set("action:pk_demo:{done}", `{"v":1,"state":"done","result":"eyJvayI6dHJ1ZX0="}`)
			if r, err := s.BeginAction(ctx, "pk_demo:done", "owner-1", time.Now().Add(time.Minute)); err != nil || string(r) != `{"ok":true}` {
				t.Errorf("old result read as %q %v", r, err)
			}
			set("action:pk_demo:{running}", `{"v":1,"state":"running"}`)
			if _, err := s.BeginAction(ctx, "pk_demo:running", "owner-1", time.Now().Add(time.Minute)); !errors.Is(err, engine.ErrActionInProgress) {
				t.Errorf("old claim read as %v", err)
			}
			// A claim of a release before owners has no owner: nobody releases it, its lease ends it.
			if err := s.AbandonAction(ctx, "pk_demo:running", "owner-1"); err != nil || get("action:pk_demo:{running}") == "" {
				t.Errorf("an old claim released by a new owner: %v", err)
			}

			// What this release writes is version 1 too.
			now := time.Now()
			if err := s.PutSession(ctx, &engine.Session{ID: "new", TenantKey: "pk_demo", CreatedAt: now, ExpiresAt: now.Add(time.Hour)}); err != nil {
				t.Fatal(err)
			}
			var rec struct {
				V       int
				Session map[string]any
			}
			if err := json.Unmarshal([]byte(get("session:{new}")), &rec); err != nil || rec.V != 1 || rec.Session["TenantKey"] != "pk_demo" {
				t.Errorf("session written as %s", get("session:{new}"))
			}
			s.Claim(ctx, "pk_demo:jti", now.Add(time.Hour))
			if v := get("replay:pk_demo:{jti}"); v != `{"v":1}` {
				t.Errorf("claim written as %s", v)
			}
			s.BeginAction(ctx, "pk_demo:new", "owner-1", now.Add(time.Minute))
			if v := get("action:pk_demo:{new}"); v != `{"v":1,"state":"running","owner":"owner-1"}` {
				t.Errorf("action claim written as %s", v)
			}
			s.FinishAction(ctx, "pk_demo:new", "owner-1", []byte(`{"ok":true}`), now.Add(time.Hour))
			if v := get("action:pk_demo:{new}"); v != `{"v":1,"state":"done","result":"eyJvayI6dHJ1ZX0="}` {
				t.Errorf("action result written as %s", v)
			}

			// A newer version, or no record at all: an error, never "not found" or a claim.
			for _, bad := range []string{
				`{"v":2,"session":{"ID":"x","ExpiresAt":"2099-01-01T10:00:00Z"}}`,
				`{"session":{"ID":"x","ExpiresAt":"2099-01-01T10:00:00Z"}}`,
				`{"v":1}`,
				`not json`,
			} {
				set("session:{bad}", bad)
				if got, err := s.Session(ctx, "bad"); got != nil || !errors.Is(err, redisstore.ErrUnreadable) || !errors.Is(err, engine.ErrStoreUnavailable) {
					t.Errorf("session %s: %+v %v", bad, got, err)
				}
			}
			for _, bad := range []string{
				`{"v":2,"state":"done","result":"e30="}`,
				`{"v":2,"state":"running"}`,
				`{"v":3,"state":"done","sealed":"e30="}`,
				`{"v":1,"state":"paused"}`,
				`[]`,
			} {
				set("action:pk_demo:{bad}", bad)
				if r, err := s.BeginAction(ctx, "pk_demo:bad", "owner-1", now.Add(time.Minute)); r != nil || !errors.Is(err, redisstore.ErrUnreadable) || !errors.Is(err, engine.ErrStoreUnavailable) {
					t.Errorf("action %s: %q %v", bad, r, err)
				}
				if err := s.AbandonAction(ctx, "pk_demo:bad", "owner-1"); err != nil || get("action:pk_demo:{bad}") != bad {
					t.Errorf("abandon removed the record %s: %v", bad, err)
				}
			}
		})
	}
}

// slot is the Redis Cluster slot of key: CRC16 (XMODEM) of its hash tag, or of the whole key,
// modulo 16384.
func slot(key string) int {
	if i := strings.IndexByte(key, '{'); i >= 0 {
		if j := strings.IndexByte(key[i+1:], '}'); j > 0 {
			key = key[i+1 : i+1+j]
		}
	}
	var crc uint16
	for i := 0; i < len(key); i++ {
		crc ^= uint16(key[i]) << 8
		for range 8 {
			if crc&0x8000 != 0 {
				crc = crc<<1 ^ 0x1021
			} else {
				crc <<= 1
			}
		}
	}
	return int(crc) % 16384
}

// TestKeyLayout checks the keys a Store writes: under the default prefix, kind, then tenant,
// then the id as the hash tag, so that a record's keys share a slot and ids spread over slots.
func TestKeyLayout(t *testing.T) {
	needRedis(t)
	ctx := t.Context()
	node := client(t, clusterNode)
	for _, key := range []string{"123456789", "engine:action:pk_demo:{abc}", "engine:session:{}", "{}x", "a{b}{c}"} {
		want, err := node.ClusterKeySlot(ctx, key).Result()
		if err != nil {
			t.Fatal(err)
		}
		if got := slot(key); got != int(want) {
			t.Fatalf("slot(%q) = %d, the server says %d", key, got, want)
		}
	}

	raw := client(t, standalone)
	s := redisstore.New(raw, nil)
	exp := time.Now().Add(time.Minute)
	sid, jti := "5b0a4ad6-layout-test-session", "c5e1-layout-test-jti"
	if err := s.PutSession(ctx, &engine.Session{ID: sid, TenantKey: "pk_demo", ExpiresAt: exp}); err != nil {
		t.Fatal(err)
	}
	s.Claim(ctx, "pk_demo:"+jti, exp)
	s.BeginAction(ctx, "pk_demo:"+jti, "owner-1", exp)
	keys, err := raw.Keys(ctx, "engine:*layout-test*").Result()
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(keys)
	want := []string{"engine:action:pk_demo:{" + jti + "}", "engine:replay:pk_demo:{" + jti + "}", "engine:session:{" + sid + "}"}
	if !slices.Equal(keys, want) {
		t.Fatalf("keys %q\nwant %q", keys, want)
	}
	if slot(keys[0]) != slot(keys[1]) {
		t.Errorf("the action and the claim of one token are in slots %d and %d", slot(keys[0]), slot(keys[1]))
	}
	for _, k := range keys {
		ttl, err := raw.PTTL(ctx, k).Result()
		if err != nil || ttl <= 0 || ttl > time.Minute {
			t.Errorf("%s expires in %v (%v), want within a minute", k, ttl, err)
		}
	}

	slots := map[int]bool{}
	for i := range 1000 {
		slots[slot(fmt.Sprintf("engine:action:pk_demo:{%08x-jti}", i*7919))] = true
	}
	if len(slots) < 900 {
		t.Errorf("1000 ids in %d slots: the hash tag does not spread them", len(slots))
	}
}

func TestPrefixesKeepStoresApart(t *testing.T) {
	for name, newClient := range backends(t) {
		t.Run(name, func(t *testing.T) {
			ctx := t.Context()
			client := newClient(t)
			a := redisstore.New(client, &redisstore.Options{Prefix: prefix(t) + "a:"})
			b := redisstore.New(client, &redisstore.Options{Prefix: prefix(t) + "b:"})
			exp := time.Now().Add(time.Hour)
			for _, s := range []*redisstore.Store{a, b} {
				if ok, err := s.Claim(ctx, "pk_demo:jti", exp); !ok || err != nil {
					t.Errorf("claim: %v %v", ok, err)
				}
				if r, err := s.BeginAction(ctx, "pk_demo:jti", "owner-1", exp); r != nil || err != nil {
					t.Errorf("begin: %q %v", r, err)
				}
			}
			if err := a.PutSession(ctx, &engine.Session{ID: "sid", ExpiresAt: exp}); err != nil {
				t.Fatal(err)
			}
			if _, err := b.Session(ctx, "sid"); !errors.Is(err, engine.ErrSessionNotFound) {
				t.Errorf("a session of prefix a found under prefix b: %v", err)
			}
		})
	}
}

// TestClock checks that expiry is measured against the store's clock, the engine's.
func TestClock(t *testing.T) {
	needRedis(t)
	ctx := t.Context()
	client := client(t, standalone)
	later := func() time.Time { return time.Now().Add(2 * time.Hour) }
	s := redisstore.New(client, &redisstore.Options{Prefix: prefix(t), Now: later})
	now := time.Now()
	if err := s.PutSession(ctx, &engine.Session{ID: "sid", ExpiresAt: now.Add(3 * time.Hour)}); err != nil {
		t.Fatal(err)
	}
	if ttl := client.PTTL(ctx, prefix(t)+"session:{sid}").Val(); ttl <= 59*time.Minute || ttl > time.Hour {
		t.Errorf("a session 1 h from the store's clock expires in %v", ttl)
	}
	ahead := redisstore.New(client, &redisstore.Options{Prefix: prefix(t), Now: func() time.Time { return time.Now().Add(4 * time.Hour) }})
	if _, err := ahead.Session(ctx, "sid"); !errors.Is(err, engine.ErrSessionNotFound) {
		t.Errorf("a session past its expiry by the store's clock: %v", err)
	}
}

// checkFailsClosed calls every method of s, whose server does not answer, and checks that each
// fails with ErrUnavailable and answers nothing a caller could take for a success.
func checkFailsClosed(t *testing.T, s *redisstore.Store) {
	t.Helper()
	ctx := t.Context()
	exp := time.Now().Add(time.Hour)
	unavailable := func(what string, err error) {
		t.Helper()
		if !errors.Is(err, redisstore.ErrUnavailable) || !errors.Is(err, engine.ErrStoreUnavailable) {
			t.Errorf("%s: %v, want ErrUnavailable", what, err)
		}
	}
	ok, err := s.Claim(ctx, "pk_demo:jti", exp)
	unavailable("Claim", err)
	if ok {
		t.Error("Claim reported a claim without a server")
	}
	r, err := s.BeginAction(ctx, "pk_demo:jti", "owner-1", exp)
	unavailable("BeginAction", err)
	if r != nil || errors.Is(err, engine.ErrActionInProgress) {
		t.Errorf("BeginAction: %q %v", r, err)
	}
	sess, err := s.Session(ctx, "sid")
	unavailable("Session", err)
	if sess != nil || errors.Is(err, engine.ErrSessionNotFound) {
		t.Errorf("Session: %v %v", sess, err)
	}
	unavailable("PutSession", s.PutSession(ctx, &engine.Session{ID: "sid", ExpiresAt: exp}))
	unavailable("FinishAction", s.FinishAction(ctx, "pk_demo:jti", "owner-1", []byte(`{}`), exp))
	unavailable("AbandonAction", s.AbandonAction(ctx, "pk_demo:jti", "owner-1"))
	unavailable("Ping", s.Ping(ctx))
}

func TestUnavailable(t *testing.T) {
	needRedis(t)
	t.Run("closed port", func(t *testing.T) {
		port, err := testkit.FreePort()
		if err != nil {
			t.Fatal(err)
		}
		client := redis.NewClient(&redis.Options{Addr: fmt.Sprintf("127.0.0.1:%d", port)})
		t.Cleanup(func() { client.Close() })
		checkFailsClosed(t, redisstore.New(client, &redisstore.Options{Timeout: 100 * time.Millisecond}))
	})

	t.Run("server stopped and restarted", func(t *testing.T) {
		srv := startTestRedis(t)
		s := redisstore.New(client(t, srv), &redisstore.Options{Timeout: 200 * time.Millisecond})
		ctx := t.Context()
		exp := time.Now().Add(time.Hour)
		if ok, err := s.Claim(ctx, "pk_demo:before", exp); !ok || err != nil {
			t.Fatalf("claim: %v %v", ok, err)
		}
		srv.Stop()
		checkFailsClosed(t, s)
		if err := srv.Start(); err != nil {
			t.Fatal(err)
		}
		// The pool's connections died with the server: the store reconnects by itself.
		if ok, err := s.Claim(ctx, "pk_demo:after", exp); !ok || err != nil {
			t.Fatalf("claim after the restart: %v %v", ok, err)
		}
		if err := s.Ping(ctx); err != nil {
			t.Fatal(err)
		}
	})

	for _, bounded := range []bool{false, true} {
		t.Run(fmt.Sprintf("server does not answer, ContextTimeoutEnabled %v", bounded), func(t *testing.T) {
			// A server that accepts connections and never answers. A client that does not end
			// its calls at their context's deadline would wait 3 s per attempt: the store
			// still answers within its time-out.
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			var mu sync.Mutex
			var conns []net.Conn
			go func() {
				for {
					c, err := ln.Accept()
					if err != nil {
						return
					}
					mu.Lock()
					conns = append(conns, c)
					mu.Unlock()
				}
			}()
			client := redis.NewClient(&redis.Options{Addr: ln.Addr().String(), ContextTimeoutEnabled: bounded})
			t.Cleanup(func() {
				ln.Close()
				mu.Lock()
				for _, c := range conns {
					c.Close()
				}
				mu.Unlock()
				client.Close()
			})
			s := redisstore.New(client, &redisstore.Options{Timeout: 100 * time.Millisecond})
			start := time.Now()
			ok, err := s.Claim(context.Background(), "pk_demo:jti", time.Now().Add(time.Hour))
			if ok || !errors.Is(err, redisstore.ErrUnavailable) || !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("Claim: %v %v", ok, err)
			}
			if d := time.Since(start); d > 2*time.Second {
				t.Errorf("Claim returned after %v, not bounded by its 100 ms time-out", d)
			}
			checkFailsClosed(t, s)
		})
	}
}

func TestNewFromURL(t *testing.T) {
	needRedis(t)
	ctx := t.Context()
	for _, u := range []string{
		"redis://" + standalone.Addr + "/0?dial_timeout=1s",
		"redis+cluster://" + clusterNode.Addr,
	} {
		t.Run(u, func(t *testing.T) {
			s, err := redisstore.NewFromURL(u, &redisstore.Options{Prefix: prefix(t)})
			if err != nil {
				t.Fatal(err)
			}
			if err := s.Ping(ctx); err != nil {
				t.Fatal(err)
			}
			if ok, err := s.Claim(ctx, "pk_demo:jti", time.Now().Add(time.Minute)); !ok || err != nil {
				t.Fatalf("claim: %v %v", ok, err)
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			if _, err := s.Claim(ctx, "pk_demo:other", time.Now().Add(time.Minute)); !errors.Is(err, redisstore.ErrUnavailable) {
				t.Errorf("a closed store: %v", err)
			}
		})
	}

	for _, bad := range []string{
		"http://" + standalone.Addr,
		"redis://user:s3cret-pass@127.0.0.1:port",
		"rediss+cluster://user:s3cret-pass@127.0.0.1:6379?pool_size=x",
		"redis://user:s3cret-pass@127.0.0.1:6379?password=s3cret-pass",
		"redis://127.0.0.1:6379/x",
		"redis://127.0.0.1:6379?replica_acks=many",
		"redis://127.0.0.1:6379?replica_acks=-1",
		"%",
	} {
		if s, err := redisstore.NewFromURL(bad, nil); err == nil || strings.Contains(err.Error(), "s3cret") {
			t.Errorf("%q: %v %v", bad, s, err)
		}
	}

	// A server without replicas never confirms a write to one: replica_acks=1 fails closed.
	alone, err := redisstore.NewFromURL("redis://"+standalone.Addr+"?replica_acks=1", &redisstore.Options{Prefix: prefix(t), Timeout: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer alone.Close()
	if ok, err := alone.Claim(ctx, "pk_demo:jti", time.Now().Add(time.Minute)); ok || !errors.Is(err, redisstore.ErrUnavailable) {
		t.Errorf("a claim that no replica confirms: %v %v, want ErrUnavailable", ok, err)
	}

	// A client given to New is its owner's: Close leaves it open.
	client := client(t, standalone)
	if err := redisstore.New(client, nil).Close(); err != nil {
		t.Fatal(err)
	}
	if err := client.Ping(ctx).Err(); err != nil {
		t.Errorf("Close closed a client it did not make: %v", err)
	}
}

// TestSessionsPerUser: a user's sessions past MaxSessionsPerUser are dropped oldest first, on a
// standalone server and a cluster (where the user's set and the sessions live in different
// slots); other users' sessions stay.
func TestSessionsPerUser(t *testing.T) {
	for name, newClient := range backends(t) {
		t.Run(name, func(t *testing.T) {
			ctx := t.Context()
			s := redisstore.New(newClient(t), &redisstore.Options{Prefix: prefix(t), Timeout: generous, MaxSessionsPerUser: 3})
			now := time.Now()
			put := func(id, user string, i int) {
				t.Helper()
				sess := &engine.Session{ID: id, TenantKey: "pk_demo", User: user, CreatedAt: now, ExpiresAt: now.Add(time.Hour + time.Duration(i)*time.Second)}
				if err := s.PutSession(ctx, sess); err != nil {
					t.Fatal(err)
				}
			}
			has := func(id string) bool {
				_, err := s.Session(ctx, id)
				return err == nil
			}
			put("bob-0", "bob", 0)
			for i := range 5 {
				put(fmt.Sprint("alice-", i), "alice", i)
			}
			if has("alice-0") || has("alice-1") || !has("alice-2") || !has("alice-4") || !has("bob-0") {
				t.Fatal("alice keeps more than 3 sessions, or bob lost his")
			}
		})
	}
}
