-- Twin of SQLite's 0012: link rules (see that file).
CREATE TABLE IF NOT EXISTS link_rules (
    link_id bigint PRIMARY KEY REFERENCES links(id) ON DELETE CASCADE,
    account_id bigint NOT NULL,
    document text NOT NULL,
    human_clicks bigint NOT NULL DEFAULT 0,
    updated_at text COLLATE "C" NOT NULL
);
