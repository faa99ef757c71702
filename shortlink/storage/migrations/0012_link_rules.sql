-- Link rules (issue 36): one document per link that has rules, limits or a fallback, kept as the
-- JSON the API answers (it is read whole, with the link, by the visitor path), and deleted with
-- its link. human_clicks counts the human clicks that used up maxClicks, persisted by the click
-- writer (a single SQLite process counts in memory; PostgreSQL + Redis count in Redis).
CREATE TABLE IF NOT EXISTS link_rules (
    link_id INTEGER PRIMARY KEY REFERENCES links(id) ON DELETE CASCADE,
    account_id INTEGER NOT NULL,
    document TEXT NOT NULL,
    human_clicks INTEGER NOT NULL DEFAULT 0,
    updated_at TEXT NOT NULL
);
