-- Apps of an account: the iOS and/or Android app that the association files of the
-- account's custom domains name. account_id NULL: an app of the service itself, named on the
-- short host. Lists (paths, fingerprints) are JSON arrays of text: they are only ever read
-- whole, to build the association files. An owner names an iOS app id or an Android package
-- once (coalesce: NULL is not equal to NULL in a unique index).
CREATE TABLE IF NOT EXISTS apps (
    id INTEGER PRIMARY KEY,
    public_id TEXT NOT NULL UNIQUE,
    account_id INTEGER REFERENCES accounts(id) ON DELETE CASCADE,
    name TEXT,
    ios_team_id TEXT,
    ios_bundle_id TEXT,
    ios_app_store_id TEXT,
    ios_paths TEXT,
    android_package TEXT,
    android_fingerprints TEXT,
    android_paths TEXT,
    created_at TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS apps_account ON apps (account_id);
CREATE UNIQUE INDEX IF NOT EXISTS apps_owner_ios ON apps (coalesce(account_id, 0), ios_team_id, ios_bundle_id)
    WHERE ios_bundle_id IS NOT NULL;
CREATE UNIQUE INDEX IF NOT EXISTS apps_owner_android ON apps (coalesce(account_id, 0), android_package)
    WHERE android_package IS NOT NULL;

-- A link that opens one of its account's apps at a deep path (at most one app per link). It
-- goes with the link and with the app (ON DELETE CASCADE); the visitor path reads it with the
-- link, in the same query, so it rides in the link cache entry.
CREATE TABLE IF NOT EXISTS link_apps (
    link_id INTEGER PRIMARY KEY REFERENCES links(id) ON DELETE CASCADE,
    app_id INTEGER NOT NULL REFERENCES apps(id) ON DELETE CASCADE,
    deep_path TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS link_apps_app ON link_apps (app_id);

-- Deferred deep links: the tokens already redeemed (a token is issued without a write: it is
-- signed; it is redeemed once). Only a hash of the token, and when; nothing of the visitor.
CREATE TABLE IF NOT EXISTS deferred_redemptions (
    token_hash TEXT PRIMARY KEY,
    redeemed_at TEXT NOT NULL
);

-- What the visitor path decided for the human visits of links into apps, per link and day:
-- sent to the app (an intent), to the store (the app page on iPhones), or to the website.
CREATE TABLE IF NOT EXISTS link_app_days (
    link_id INTEGER NOT NULL REFERENCES links(id) ON DELETE CASCADE,
    day TEXT NOT NULL,
    app INTEGER NOT NULL DEFAULT 0,
    store INTEGER NOT NULL DEFAULT 0,
    web INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (link_id, day)
) WITHOUT ROWID;
