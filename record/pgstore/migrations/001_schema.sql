-- The conversation record: chains of entries, checkpoints over their heads, users' wrapped
-- data keys and the statements of what retention deleted. Chain and entry ids sort bytewise
-- (COLLATE "C"), as the record lists them, whatever the database's locale.

CREATE TABLE record_chains (
	chain           text COLLATE "C" PRIMARY KEY,
	tenant          text NOT NULL,
	environment     text NOT NULL,
	user_id         text NOT NULL,
	conversation_id text NOT NULL,
	head_seq        bigint NOT NULL DEFAULT 0,
	head_hash       bytea NOT NULL,
	first_at        timestamptz,
	last_at         timestamptz,
	covered_seq     bigint NOT NULL DEFAULT 0
);
-- A tenant's and a user's conversations by time, every conversation by time, and the
-- sweeper's conversations that ended before a date.
CREATE INDEX record_chains_tenant_first ON record_chains (tenant, first_at, chain);
CREATE INDEX record_chains_user_first ON record_chains (tenant, user_id, first_at, chain);
CREATE INDEX record_chains_first ON record_chains (first_at, chain);
CREATE INDEX record_chains_tenant_last ON record_chains (tenant, last_at);
-- The chains the next checkpoint covers: few, however many chains there are.
CREATE INDEX record_chains_uncovered ON record_chains (chain) WHERE head_seq > covered_seq;

CREATE TABLE record_entries (
	chain           text COLLATE "C" NOT NULL,
	seq             bigint NOT NULL,
	id              text COLLATE "C" NOT NULL UNIQUE,
	kind            text NOT NULL,
	at              timestamptz NOT NULL,
	tenant          text NOT NULL,
	environment     text NOT NULL,
	user_id         text NOT NULL,
	session_id      text NOT NULL,
	conversation_id text NOT NULL,
	turn_id         text NOT NULL,
	request_id      text NOT NULL,
	prev            bytea NOT NULL,
	hash            bytea NOT NULL,
	personal        bytea,
	personal_hash   bytea,
	evidence        bytea,
	evidence_hash   bytea,
	PRIMARY KEY (chain, seq)
);

CREATE TABLE record_checkpoints (
	seq       bigint PRIMARY KEY,
	at        timestamptz NOT NULL,
	prev      bytea,
	root      bytea NOT NULL,
	size      bigint NOT NULL,
	key_id    text NOT NULL,
	signature bytea NOT NULL
);

CREATE TABLE record_checkpoint_heads (
	checkpoint_seq bigint NOT NULL REFERENCES record_checkpoints (seq),
	leaf_index     bigint NOT NULL,
	chain          text COLLATE "C" NOT NULL,
	head_seq       bigint NOT NULL,
	head_hash      bytea NOT NULL,
	PRIMARY KEY (checkpoint_seq, leaf_index)
);
-- An export's inclusion proofs: the checkpoints that name a chain.
CREATE INDEX record_checkpoint_heads_chain ON record_checkpoint_heads (chain, checkpoint_seq);

CREATE TABLE record_keys (
	tenant     text NOT NULL,
	user_id    text NOT NULL,
	key_id     text NOT NULL DEFAULT '',
	wrapped    bytea,
	created_at timestamptz,
	erased_at  timestamptz,
	legal_hold boolean NOT NULL DEFAULT false,
	PRIMARY KEY (tenant, user_id)
);

CREATE TABLE record_prunes (
	id          text COLLATE "C" PRIMARY KEY,
	at          timestamptz NOT NULL,
	tenant      text NOT NULL,
	chain       text COLLATE "C" NOT NULL,
	through_seq bigint NOT NULL,
	head_hash   bytea NOT NULL,
	entries     bigint NOT NULL,
	reason      text NOT NULL,
	key_id      text NOT NULL,
	signature   bytea NOT NULL
);
CREATE INDEX record_prunes_chain ON record_prunes (chain, id);
