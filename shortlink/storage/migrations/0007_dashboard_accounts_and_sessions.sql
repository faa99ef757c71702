-- Dashboard sign-in: an account's password (argon2id, with its salt and parameters) and
-- server-side sessions. A session row holds only the SHA-256 of its token: the cookie's
-- value is never stored, so the file (or a backup) signs nobody in. Deleting an account's
-- rows signs it out everywhere.
ALTER TABLE accounts ADD COLUMN password_hash TEXT;

CREATE TABLE dashboard_sessions (
    id INTEGER PRIMARY KEY,
    token_hash TEXT NOT NULL UNIQUE,
    account_id INTEGER NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    created_ms INTEGER NOT NULL,          -- Unix milliseconds: the absolute expiry counts from here
    seen_ms INTEGER NOT NULL              -- last request, at most a minute stale: the idle expiry
);
CREATE INDEX dashboard_sessions_account ON dashboard_sessions(account_id);

-- When a key last let a request in, written at most once a minute per key.
ALTER TABLE api_keys ADD COLUMN last_used_at TEXT;
