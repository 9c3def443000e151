-- The conversation record (package record). Times are UTC RFC 3339 text with nine fractional
-- digits, so that they sort as text.
CREATE TABLE record_entries (
	id              TEXT PRIMARY KEY,
	chain           TEXT NOT NULL,
	seq             INTEGER NOT NULL,
	kind            TEXT NOT NULL,
	at              TEXT NOT NULL,
	tenant          TEXT NOT NULL,
	environment     TEXT NOT NULL,
	user_id         TEXT NOT NULL,
	session_id      TEXT NOT NULL,
	conversation_id TEXT NOT NULL,
	turn_id         TEXT NOT NULL,
	request_id      TEXT NOT NULL,
	prev            BLOB NOT NULL,
	hash            BLOB NOT NULL,
	personal        BLOB,
	personal_hash   BLOB,
	evidence        BLOB,
	evidence_hash   BLOB,
	UNIQUE (chain, seq)
);
CREATE INDEX record_entries_tenant_at ON record_entries (tenant, at);
CREATE INDEX record_entries_tenant_user_at ON record_entries (tenant, user_id, at);

CREATE TABLE record_chains (
	chain           TEXT PRIMARY KEY,
	tenant          TEXT NOT NULL,
	environment     TEXT NOT NULL,
	user_id         TEXT NOT NULL,
	conversation_id TEXT NOT NULL,
	head_seq        INTEGER NOT NULL,
	head_hash       BLOB NOT NULL,
	first_at        TEXT NOT NULL,
	last_at         TEXT NOT NULL,
	covered_seq     INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX record_chains_tenant_first ON record_chains (tenant, first_at, chain);
CREATE INDEX record_chains_tenant_user_first ON record_chains (tenant, user_id, first_at, chain);
CREATE INDEX record_chains_first ON record_chains (first_at, chain);
CREATE INDEX record_chains_uncovered ON record_chains (chain) WHERE head_seq > covered_seq;

CREATE TABLE record_keys (
	tenant     TEXT NOT NULL,
	user_id    TEXT NOT NULL,
	key_id     TEXT NOT NULL DEFAULT '',
	wrapped    BLOB,
	created_at TEXT NOT NULL DEFAULT '',
	erased_at  TEXT,
	legal_hold INTEGER NOT NULL DEFAULT 0,
	PRIMARY KEY (tenant, user_id)
);

CREATE TABLE record_checkpoints (
	seq       INTEGER PRIMARY KEY,
	at        TEXT NOT NULL,
	prev      BLOB,
	root      BLOB NOT NULL,
	size      INTEGER NOT NULL,
	key_id    TEXT NOT NULL,
	signature BLOB NOT NULL
);

CREATE TABLE record_checkpoint_heads (
	checkpoint_seq INTEGER NOT NULL,
	leaf_index     INTEGER NOT NULL,
	chain          TEXT NOT NULL,
	head_seq       INTEGER NOT NULL,
	head_hash      BLOB NOT NULL,
	PRIMARY KEY (checkpoint_seq, leaf_index)
);
CREATE INDEX record_checkpoint_heads_chain ON record_checkpoint_heads (chain, checkpoint_seq);

CREATE TABLE record_prunes (
	id          TEXT PRIMARY KEY,
	at          TEXT NOT NULL,
	tenant      TEXT NOT NULL,
	chain       TEXT NOT NULL,
	through_seq INTEGER NOT NULL,
	head_hash   BLOB NOT NULL,
	entries     INTEGER NOT NULL,
	reason      TEXT NOT NULL,
	key_id      TEXT NOT NULL,
	signature   BLOB NOT NULL
);
CREATE INDEX record_prunes_chain ON record_prunes (chain, id);
