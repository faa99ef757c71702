-- Twin of SQLite's 0011: tags on links (see that file).
CREATE TABLE IF NOT EXISTS link_tags (
    link_id bigint NOT NULL REFERENCES links(id) ON DELETE CASCADE,
    account_id bigint NOT NULL,
    name text COLLATE "C" NOT NULL,
    colour text COLLATE "C" NOT NULL,
    PRIMARY KEY (link_id, name)
);
CREATE INDEX IF NOT EXISTS link_tags_account_name ON link_tags (account_id, name, link_id);
