-- Tags on links: names with a colour, zero or more per link. One row per tag of a
-- link rather than an account-wide tag table: a tag lives exactly as long as a link carries
-- it, and goes with the link (ON DELETE CASCADE). A name has one colour across an account's
-- links; storage.tags keeps them equal. account_id is repeated so that "the account's links
-- tagged X" is one index range.
CREATE TABLE IF NOT EXISTS link_tags (
    link_id INTEGER NOT NULL REFERENCES links(id) ON DELETE CASCADE,
    account_id INTEGER NOT NULL,
    name TEXT NOT NULL,
    colour TEXT NOT NULL,
    PRIMARY KEY (link_id, name)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS link_tags_account_name ON link_tags (account_id, name, link_id);
