// Package redisstore keeps the engine's shared state in Redis, or in any server that speaks its
// protocol (Valkey, Redis Cluster, managed Redis), so that many engine replicas behind a load
// balancer agree without sticky sessions.
//
// A [Store] is an [engine.SessionStore], an [engine.ReplayStore], an [engine.ActionStore], an
// [engine.RateLimiter], an [engine.Budget] and an [engine.TurnLog]:
//
//	store, err := redisstore.NewFromURL("redis://redis.internal:6379/0", nil)
//	if err != nil { … }
//	defer store.Close()
//	e, err := engine.New(engine.Config{…, Sessions: store, Replay: store, Actions: store,
//		RateLimiter: store, Budget: store, TurnLog: store})
//
// [Store.Handoffs] is a handoff.Store over the same client (package handoff), so that replicas
// share the conversations handed to a person.
//
// A host that already has a client passes it to [New].
//
// # Keys
//
// Every key starts with [Options.Prefix] ("engine:" by default), then the kind of record, the
// tenant when the id carries one ("tenantKey:id"), and the id in braces:
//
//	engine:session:{0f6c…}          a session
//	engine:replay:pk_demo:{7d2a…}   a single-use value (a proof or token id)
//	engine:action:pk_demo:{7d2a…}   a confirmed action: claimed, then its reply
//	engine:rate:{pk_demo}:t         the tenant's rate limit bucket
//	engine:rate:{pk_demo}:u:9c1e…   a user's, named by a keyed hash of the token
//	engine:turn:{3f1b…}             a turn's events, a stream whose entry ids are the event ids
//	engine:turnmeta:{3f1b…}         its owner (tenant, user hash, session) and whether it is done
//	engine:budget:{pk_demo}:tokens:d:20261126     a budget's count in its window (UTC day or
//	engine:budget:{pk_demo}:turns:9c1e…:d:20261126  month), expiring when the window closes
//	engine:usage:{pk_demo}:2026-11-26[:models]    the usage ledger's day of a tenant (UsageLedger)
//
// The braces are a Redis Cluster hash tag: every key about one id lands in one slot, and ids
// spread over all slots. Rate limit buckets are tagged with the tenant, so that one script
// takes from a request's user and tenant buckets together; it measures time with the server's
// clock, one clock for every replica. Each record is a single key that expires with it, so nothing needs
// sweeping. The prefix should hold no braces, unless every key is meant to share one slot.
//
// # Values
//
// Values are JSON objects with a version, {"v":1,…}, so that replicas of the next release read
// what this one wrote during a rolling upgrade. A record of a version newer than this package
// knows is an error wrapping [ErrUnreadable], never misread.
//
// With [Options.SealKey] (give it the engine's signing key), the data of each turn event and
// each action's reply are sealed with AES-256-GCM under a key derived from it, bound to the
// record: what users said and were shown does not rest readable in Redis. A sealed value that
// does not open is never answered: its turn is [engine.ErrTurnNotFound], its action record an
// error wrapping [ErrUnreadable], and the action does not run again.
//
// # Failures
//
// Each call is bounded by [Options.Timeout], whether or not its context has a deadline. When
// Redis cannot be reached or does not answer in time, the error wraps [ErrUnavailable] and
// [engine.ErrStoreUnavailable], and the results fail closed: Claim reports false, BeginAction
// gives no claim, Session returns no session. A replayed proof is never accepted and an action
// never runs twice because Redis was down. A call that Redis carried out but answered too late
// errs on the same side: its claim stands, and holds the action as in progress until its lease
// ends.
//
// Rate limits are the exception: when [Store.Allow] fails, the engine applies the limits with
// each process's own buckets until Redis answers again, so that an outage does not stop every
// request.
package redisstore
