-- Webhooks: endpoints, the outbox of events, one delivery per (event, endpoint)
-- and the log of every attempt.
--
-- An endpoint's signing secret is never stored: `secret_nonce` is random, and the secret is
-- HMAC(installation key, nonce) (shortlink/webhooks/secrets.py), so the database alone (a
-- backup, a copied file) cannot sign. `previous_nonce` signs as well until previous_until_ms
-- (a rotation's overlap).
CREATE TABLE IF NOT EXISTS webhook_endpoints (
    id INTEGER PRIMARY KEY,
    public_id TEXT NOT NULL UNIQUE,
    account_id INTEGER NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    url TEXT NOT NULL,
    description TEXT,
    events TEXT NOT NULL,           -- event types, space-separated, each also preceded by one
    link_ids TEXT,                  -- JSON array of link ids it is limited to; NULL: no limit
    tags TEXT,                      -- JSON array of tag names it is limited to; NULL: no limit
    secret_nonce TEXT NOT NULL,
    previous_nonce TEXT,
    previous_until_ms INTEGER,
    is_enabled INTEGER NOT NULL DEFAULT 1,
    disabled_reason TEXT,
    failing_since_ms INTEGER,       -- first failure since the last success
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS webhook_endpoints_account ON webhook_endpoints(account_id);

-- The outbox: written in the transaction of the change (or click batch) that causes the event.
-- AUTOINCREMENT: an id is never used twice, so "after id N" never skips a new event.
CREATE TABLE IF NOT EXISTS webhook_events (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    public_id TEXT NOT NULL UNIQUE,
    account_id INTEGER NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    type TEXT NOT NULL,
    link_id INTEGER,                -- internal id, no foreign key: a deleted link's events stay
    link_public_id TEXT,
    link_tags TEXT,                 -- JSON array of the link's tag names then; NULL: read at dispatch
    created_ms INTEGER NOT NULL,
    data TEXT NOT NULL,             -- JSON of the body's `data` (a click's: its labels until dispatch)
    dispatched INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS webhook_events_waiting ON webhook_events(id) WHERE dispatched = 0;
CREATE INDEX IF NOT EXISTS webhook_events_created ON webhook_events(created_ms);

CREATE TABLE IF NOT EXISTS webhook_deliveries (
    id INTEGER PRIMARY KEY,
    event_id INTEGER NOT NULL REFERENCES webhook_events(id) ON DELETE CASCADE,
    endpoint_id INTEGER NOT NULL REFERENCES webhook_endpoints(id) ON DELETE CASCADE,
    state TEXT NOT NULL,            -- pending, succeeded, failed
    attempts INTEGER NOT NULL DEFAULT 0,
    next_attempt_ms INTEGER NOT NULL,
    lease_until_ms INTEGER NOT NULL DEFAULT 0,  -- a deliverer is sending it until then
    first_failed_ms INTEGER,
    UNIQUE (endpoint_id, event_id)
);
CREATE INDEX IF NOT EXISTS webhook_deliveries_due ON webhook_deliveries(next_attempt_ms) WHERE state = 'pending';
CREATE INDEX IF NOT EXISTS webhook_deliveries_event ON webhook_deliveries(event_id);

CREATE TABLE IF NOT EXISTS webhook_attempts (
    id INTEGER PRIMARY KEY,
    delivery_id INTEGER NOT NULL REFERENCES webhook_deliveries(id) ON DELETE CASCADE,
    endpoint_id INTEGER NOT NULL REFERENCES webhook_endpoints(id) ON DELETE CASCADE,
    ts_ms INTEGER NOT NULL,
    status INTEGER,                 -- the HTTP status; NULL when no answer came
    latency_ms INTEGER NOT NULL,
    response_head TEXT NOT NULL,    -- the answer's first bytes, or what went wrong
    ok INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS webhook_attempts_endpoint ON webhook_attempts(endpoint_id, id);
CREATE INDEX IF NOT EXISTS webhook_attempts_delivery ON webhook_attempts(delivery_id);
CREATE INDEX IF NOT EXISTS webhook_attempts_time ON webhook_attempts(ts_ms);
