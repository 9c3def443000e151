package main

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/convengine/engine"
	"github.com/convengine/engine/handoff"
	"github.com/convengine/engine/redisstore"
	"github.com/convengine/engine/usage"
	"github.com/redis/go-redis/v9"
)

// stores are the engine's shared state, rate limits, budgets and the turns' events included:
// Redis when a URL is given, memory otherwise.
type stores struct{ redis *redisstore.Store }

// handoffs gives the switchboard the shared stores: with Redis, every replica relays the
// handoffs any replica started, and a contact centre's signature is taken once across them.
func (s stores) handoffs(o *handoff.Options) {
	if s.redis != nil {
		o.Store, o.Replay = s.redis.Handoffs(), s.redis
	}
}

func (s stores) apply(cfg *engine.Config) {
	if s.redis != nil {
		cfg.Sessions, cfg.Replay, cfg.Actions, cfg.RateLimiter, cfg.TurnLog = s.redis, s.redis, s.redis, s.redis, s.redis
		cfg.Budget = s.redis
		return
	}
	cfg.TurnLog = &engine.MemoryTurnLog{} // turns can be resumed (GET /engine/turns/{id})
	cfg.Budget = &usage.MemoryBudget{}    // the budgets of the tenants' limits, in this process
}

// openStores connects to Redis when url is set and refuses to start if it does not answer.
// What the store keeps of turns and actions is sealed under a key derived from signingKey.
// go-redis's own messages (a dial that failed, a sentinel naming a new primary) go to log.
func openStores(ctx context.Context, url string, signingKey []byte, log *slog.Logger) (stores, func(), error) {
	if url == "" {
		return stores{}, func() {}, nil
	}
	redis.SetLogger(redisLog{log})
	store, err := redisstore.NewFromURL(url, &redisstore.Options{SealKey: signingKey})
	if err != nil {
		return stores{}, nil, fmt.Errorf("-redis: %w", err)
	}
	pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := store.Ping(pctx); err != nil {
		store.Close()
		return stores{}, nil, fmt.Errorf("-redis: the server does not answer: %w", err)
	}
	return stores{redis: store}, func() { store.Close() }, nil
}

// redisLog writes go-redis's messages to the server's log, as warnings: they tell of
// connections lost and failovers. They name addresses, never a password.
type redisLog struct{ log *slog.Logger }

func (l redisLog) Printf(ctx context.Context, format string, v ...any) {
	l.log.WarnContext(ctx, "redis: "+fmt.Sprintf(format, v...))
}
