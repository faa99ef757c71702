-- Accounts, keys, links and clicks. Internal keys are INTEGER rowids (compact in
-- the click and rollup tables); public identifiers are opaque random strings.
-- Times: link and account times are ISO 8601 UTC text ('2026-01-02T03:04:05.678Z',
-- sortable as text); click times are integer Unix milliseconds; days are
-- 'YYYY-MM-DD' UTC text.

CREATE TABLE accounts (
    id INTEGER PRIMARY KEY,
    public_id TEXT NOT NULL UNIQUE,
    email TEXT NOT NULL UNIQUE COLLATE NOCASE,
    name TEXT,
    created_at TEXT NOT NULL
);

CREATE TABLE subscriptions (
    account_id INTEGER PRIMARY KEY REFERENCES accounts(id) ON DELETE CASCADE,
    is_active INTEGER NOT NULL,
    current_period_end TEXT,
    cancel_at_period_end INTEGER NOT NULL DEFAULT 0
);

CREATE TABLE api_keys (
    id INTEGER PRIMARY KEY,
    public_id TEXT NOT NULL UNIQUE,
    account_id INTEGER NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    prefix TEXT NOT NULL,
    key_hash TEXT NOT NULL UNIQUE,       -- SHA-256 hex of the whole key
    name TEXT,
    created_at TEXT NOT NULL,
    revoked_at TEXT
);
CREATE INDEX api_keys_account ON api_keys(account_id);

CREATE TABLE domains (
    host TEXT PRIMARY KEY COLLATE NOCASE,
    account_id INTEGER NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    created_at TEXT NOT NULL
);
CREATE INDEX domains_account ON domains(account_id);

CREATE TABLE links (
    id INTEGER PRIMARY KEY,
    public_id TEXT NOT NULL UNIQUE,
    account_id INTEGER NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    short_code TEXT NOT NULL UNIQUE,     -- case-sensitive
    original_url TEXT NOT NULL,
    platform TEXT NOT NULL,
    title TEXT,
    description TEXT,
    og_image TEXT,
    ios_url TEXT,
    android_url TEXT,
    is_active INTEGER NOT NULL DEFAULT 1,
    password_hash TEXT,                  -- scrypt, with its salt and parameters
    expires_at TEXT,
    click_count INTEGER NOT NULL DEFAULT 0,
    source TEXT,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
);
CREATE INDEX links_account_created ON links(account_id, created_at DESC, id DESC);
CREATE INDEX links_account_platform ON links(account_id, platform, created_at DESC, id DESC);
CREATE INDEX links_account_active ON links(account_id, is_active, created_at DESC, id DESC);

-- Links created per account per UTC day, for the daily creation limit.
CREATE TABLE link_creations (
    account_id INTEGER NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    day TEXT NOT NULL,
    created INTEGER NOT NULL,
    PRIMARY KEY (account_id, day)
) WITHOUT ROWID;

-- Raw clicks, bots included (is_bot = 1). No raw IP: visitor_hash is a keyed
-- hash whose key rotates daily.
CREATE TABLE clicks (
    id INTEGER PRIMARY KEY,
    link_id INTEGER NOT NULL REFERENCES links(id) ON DELETE CASCADE,
    account_id INTEGER NOT NULL,
    ts INTEGER NOT NULL,                 -- Unix milliseconds, UTC
    device TEXT NOT NULL,
    browser TEXT NOT NULL,
    os TEXT NOT NULL,
    country TEXT NOT NULL,
    referrer TEXT NOT NULL,
    campaign TEXT NOT NULL,
    user_agent TEXT NOT NULL,
    visitor_hash TEXT NOT NULL,
    is_bot INTEGER NOT NULL
);
CREATE INDEX clicks_link_ts ON clicks(link_id, ts);
CREATE INDEX clicks_account_ts ON clicks(account_id, ts);

-- Random per-day keys for visitor hashes; old days are deleted so that past
-- hashes can never be recomputed from an IP.
CREATE TABLE visitor_keys (
    day TEXT PRIMARY KEY,
    key BLOB NOT NULL
);

-- Server-wide secrets (cookie signing), generated on first start.
CREATE TABLE settings (
    name TEXT PRIMARY KEY,
    value TEXT NOT NULL
);

-- Destinations whose title/description/image are still to be fetched.
CREATE TABLE pending_fetches (
    link_id INTEGER PRIMARY KEY REFERENCES links(id) ON DELETE CASCADE,
    attempts INTEGER NOT NULL DEFAULT 0,
    next_attempt_at INTEGER NOT NULL,    -- Unix milliseconds
    last_error TEXT
);
