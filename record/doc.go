// Package record keeps the tamper-evident conversation record a bank must keep: what each user
// said and was told, and the evidence of every action they approved, in hash chains that
// signed checkpoints commit to, encrypted per user so that a user can be erased while every
// chain still verifies.
//
// # Use
//
// A host makes a [Recorder] over a [Store] (package record/sqlitestore, or record/pgstore for
// replicas) and passes it as engine.Config.Recorder:
//
//	store, err := sqlitestore.Open(ctx, "/var/lib/engine/record.db", nil)
//	rec, err := record.New(store, &record.Options{Key: signingKey})
//	e, err := engine.New(engine.Config{…, Recorder: rec})
//	…
//	defer rec.Close(ctx) // flushes and writes the final checkpoint
//
// [Recorder.Handler] is the operator's reading of the record, to mount behind the host's own
// admin authentication. [Verify] checks a store; [VerifyExport] checks an export offline,
// against the public key alone ([PublicKeyPEM], served at GET /records/public-key).
//
// # What is kept, and when
//
// Each conversation of a user in a tenant's environment is one chain of entries. A turn entry
// (kind "turn") is queued when the turn ends and written in batches by the Recorder's writer
// (every Options.BatchEvery, 200 ms, or at Options.BatchSize entries, 256), retried with
// exponential backoff and jitter while the store fails; the queue is bounded
// (Options.MaxQueue, 10,000) and what overflows is counted (Stats.Dropped), logged and passed
// to Options.OnAlarm. An action entry ("action") is written synchronously, after the queued
// turns of its conversation, before the action's backend is called: when it cannot be
// written the engine refuses the action (503 record_unavailable). The outcome entry
// ("outcome") is written when the backend answered, synchronously, else queued and retried
// until written. A handoff entry ("handoff", [Recorder.Handoff]) is one event of the
// conversation handed to a person (package handoff): queued and sealed like a turn. A process killed with SIGKILL loses the turns still queued: at most
// BatchEvery's worth plus what waits on a failing store; never an action's evidence, which is
// written before the action runs.
//
// Never recorded: user tokens, session tokens, forwarded header values, API keys, the action
// token itself (its SHA-256 is kept) nor its sealed arguments.
//
// # Keys
//
// Every key is derived from the engine's key material K (Options.Key, at least 32 bytes)
// with HKDF-SHA256 (RFC 5869), salt empty, 32 bytes:
//
//   - the checkpoint key: the Ed25519 seed HKDF(K, info "convengine record checkpoint v1").
//     Its key id is the lowercase hex of the first 8 bytes of SHA-256 of the 32-byte public
//     key. The public key is published as a PEM "PUBLIC KEY" (PKIX) block.
//   - a tenant's wrapping key: HKDF(K, info "convengine record tenant v1" 0x00 tenant).
//   - a tenant's evidence key: HKDF(K, info "convengine record evidence v1" 0x00 tenant).
//   - a user's data key: 32 random bytes, stored only wrapped: AES-256-GCM under the tenant's
//     wrapping key, AAD tenant 0x00 user, with the wrapping key's id (the first 8 bytes of
//     SHA-256 of the derived key, hex).
//
// Sealed content is nonce (12 random bytes) || AES-256-GCM ciphertext and tag, with the
// entry's id as AAD. A turn's content is sealed under the user's data key; an action's and an
// outcome's under the tenant's evidence key. Rotation: Options.PreviousKeys keep the earlier
// key materials, so that keys they wrapped still unwrap, evidence they sealed still opens and
// checkpoints they signed still verify (a verifier is given every public key).
//
// # Entries
//
// An entry's hash is SHA-256 of the RFC 8785 (JCS) canonical JSON of its header:
//
//	{"v":1, "id", "chain", "seq", "kind", "at", "tenant", "environment", "user", "session",
//	 "conversation", "turn", "request", "prev", "personal", "evidence"}
//
// where id is the entry's UUID; chain is the lowercase hex of SHA-256(tenant 0x00 environment
// 0x00 user 0x00 conversation) ([ChainID]); seq counts from 1 without gaps in its chain; at is
// the engine's time in UTC, microsecond precision, formatted as Go's time.RFC3339Nano (no
// trailing zeros in the fraction, "Z"); prev is the lowercase hex of the previous entry's hash
// (64 zeros for seq 1); personal and evidence are the lowercase hex SHA-256 of the sealed
// bytes, "" when the entry has none. Because the hash commits to the sealed bytes' hash, not
// to the words, destroying a user's key (or the sealed bytes) leaves every chain verifiable.
// Order is by seq, never by time: a clock that steps back does not break a chain.
//
// The contents, once opened, are JSON: [TurnContent] (mode, locale, the disclosure shown,
// the input as the model saw it under the tenant's privacy policy, heard audio's length and
// SHA-256, the data tool calls as masked as the user saw them, the answer's spec with each
// confirm's token replaced by "sha256:" and its hash, the error), [ActionEvidence] (tool,
// arguments as shown, confirm copy, token id, SHA-256 and claims, the device check's method
// and time, the device proof verbatim with the device key and its thumbprint) and
// [OutcomeEvidence] (the action entry's id, "ok", "declined", "unknown" or "not_run", the
// masked result and the card shown).
//
// # Checkpoints
//
// Every Options.CheckpointEvery (30 s, at most a minute) and at Close, a checkpoint commits to
// the head of every chain that moved since the last one. Its leaves, in chain id order, are
// the JCS of {"chain", "seq", "hash" (hex)} ([LeafOf]); its root is the RFC 9162 (section 2.1)
// Merkle Tree Hash over them: a leaf hashes as SHA-256(0x00 || leaf), a node as SHA-256(0x01 ||
// left || right), a list of n > 1 leaves splits at the largest power of two below n. The
// signed statement is the JCS of
//
//	{"v":1, "seq", "at", "prev", "root", "size", "key"}
//
// ([Statement]) where seq counts checkpoints from 1, prev is the hex SHA-256 of the previous
// checkpoint's statement ("" for the first), root is hex, size the number of leaves and key
// the signing key's id; the signature is Ed25519 over the statement's bytes. A chain covered by
// a checkpoint at seq s must hold at seq s an entry whose hash is the leaf's. Checkpoints form
// their own chain: removing one breaks the next one's prev. The newest checkpoints can only be
// told missing by comparing [Report.Latest] with a checkpoint kept elsewhere (or by a chain's
// covered seq, which the store keeps unsigned); keep the newest statements out of the
// database when that matters.
//
// # Retention and erasure
//
// A tenant's records section ({"retention_days": N, "action_retention_days": M}, see
// [RetentionOf]) lets the sweeper ([Recorder.Sweep]) delete conversations whose last entry is
// older than N days, except those holding action evidence younger than M days (1825 by
// default) and those of users under legal hold. Each deletion writes, in the same transaction,
// a signed prune statement: the JCS of {"v":1, "type":"prune", "id", "at", "tenant", "chain",
// "through", "head", "entries", "reason", "key"} ([PruneStatementBytes]), Ed25519-signed, so
// that retention is told apart from tampering. [Recorder.Erase] destroys a user's data key
// (crypto-shredding): their words become unreadable everywhere while every chain and checkpoint
// verifies; the evidence of their actions is kept under the tenant's key, as GDPR art.
// 17(3)(b) allows for records a bank must keep. A user under legal hold ([Recorder.Hold])
// cannot be erased ([ErrLegalHold]) nor pruned.
//
// # Exports
//
// [Recorder.Export] writes a user's conversations as JSON lines, each a JSON object with a
// "type":
//
//   - "header" (first): {"type","v":1,"tenant","user","conversation"?,"at"}
//   - "chain": {"type","chain","tenant","environment","user","conversation","head":{"seq","hash"},"erased"?}
//   - "proof" (after its chain, before its entries), one per checkpoint covering the chain:
//     {"type","chain","checkpoint":{"seq","at","prev","root","size","key","signature" (hex)},
//     "leaf":{"seq","hash"},"index","path":[hex…]}, path being the RFC 9162 inclusion proof
//     (section 2.1.3) of the leaf at index in a tree of size leaves
//   - "entry", in seq order: {"type","header":{…the header above…},"hash","personal"?,"erased"?,"evidence"?}
//     with the contents opened where their keys exist
//   - "end" (last): {"type","chains","entries","sha256","at","key","signature"}, where sha256
//     is the hex SHA-256 of every byte of the lines before it (each with its "\n") and the
//     signature is Ed25519 over the JCS of {"v":1,"type":"export","chains","entries","sha256",
//     "at","key"}.
//
// A verifier recomputes each entry's hash from its header, follows prev and seq, checks each
// proof's statement signature and the leaf's inclusion, compares each covered seq's hash with
// its leaf, and checks the end line: [VerifyExport] does, a line at a time, refusing lines
// longer than [MaxExportLine].
//
// # Stores
//
// [Store] is the contract of the record's storage, record/recordtest its conformance suite.
// Appends lock one chain (never the store), so that replicas append concurrently; appends are
// idempotent by entry id; checkpoints are serialised by the store.
package record
