-- CourierPostgres schema, version 1. The library creates these tables itself on first use (under an advisory lock,
-- in one transaction); run this file instead when your application's role may not create tables.
BEGIN;
SELECT pg_advisory_xact_lock(7165074666424726017);  -- 0x636F757269657201, the key the library holds
CREATE TABLE IF NOT EXISTS courier_schema (component text PRIMARY KEY, version integer NOT NULL);
CREATE TABLE IF NOT EXISTS courier_credentials (
    name text PRIMARY KEY,
    generation bigint NOT NULL,
    state text NOT NULL CHECK (state IN ('active', 'signedOut', 'ended')),
    sealed bytea,                       -- AES-GCM (nonce, ciphertext, tag) of the credential; never the key
    refresh_started_generation bigint,  -- set (committed) just before a refresh token is sent; cleared after
    refresh_started_at timestamptz,
    updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE TABLE IF NOT EXISTS courier_cache_entries (
    namespace text NOT NULL,
    partition text NOT NULL,            -- HMAC of the Authorization value; '' for unsigned requests
    url_digest text NOT NULL,           -- HMAC of the URL
    sealed bytea NOT NULL,              -- AES-GCM of the stored response
    cost integer NOT NULL,
    last_used timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (namespace, partition, url_digest)
);
CREATE INDEX IF NOT EXISTS courier_cache_entries_lru ON courier_cache_entries (namespace, last_used);
CREATE INDEX IF NOT EXISTS courier_cache_entries_url ON courier_cache_entries (namespace, url_digest);
INSERT INTO courier_schema (component, version) VALUES ('courier', 1)
    ON CONFLICT (component) DO UPDATE SET version = EXCLUDED.version;
COMMIT;
