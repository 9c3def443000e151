package redisstore_test

import (
	"context"
	"log"
	"time"

	"github.com/convengine/engine"
	"github.com/convengine/engine/redisstore"
	"github.com/redis/go-redis/v9"
)

// Every replica opens the same Redis, and the engine keeps its sessions, its replay window and
// its action records there.
func ExampleNewFromURL() {
	store, err := redisstore.NewFromURL("rediss://engine:password@redis.internal:6380/0", &redisstore.Options{Prefix: "engine:"})
	if err != nil {
		log.Fatal(err)
	}
	defer store.Close()
	// Refuse to serve without the store rather than fail every execute.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := store.Ping(ctx); err != nil {
		log.Fatal(err)
	}
	cfg := engine.Config{Sessions: store, Replay: store, Actions: store, RateLimiter: store /* Tenants, Model, SigningKey, … */}
	_ = cfg
}

// A host that already has a Redis Cluster client shares it with the engine.
func ExampleNew() {
	client := redis.NewClusterClient(&redis.ClusterOptions{
		Addrs:                 []string{"redis-0.internal:6379", "redis-1.internal:6379", "redis-2.internal:6379"},
		ContextTimeoutEnabled: true,
	})
	store := redisstore.New(client, &redisstore.Options{Timeout: 300 * time.Millisecond})
	cfg := engine.Config{Sessions: store, Replay: store, Actions: store, RateLimiter: store /* Tenants, Model, SigningKey, … */}
	_ = cfg
}
