-- Link rules: one document per link that has rules, limits or a fallback, kept as the
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
-- Which rule (its index in the document) and which variant of a split sent each click; NULL when
-- the link's own destination did.
ALTER TABLE click_rows ADD COLUMN rule INTEGER;
ALTER TABLE click_rows ADD COLUMN variant INTEGER;
-- The daily rollups per rule and variant (variant -1: the rule is no split), human clicks only,
-- written with the click batch; unique visitors are the rows of link_rule_visitors (keyed
-- visitor hashes of the day, as link_visitors holds).
CREATE TABLE IF NOT EXISTS link_rule_days (
    link_id INTEGER NOT NULL REFERENCES links(id) ON DELETE CASCADE,
    day TEXT NOT NULL,
    rule INTEGER NOT NULL,
    variant INTEGER NOT NULL,
    clicks INTEGER NOT NULL,
    PRIMARY KEY (link_id, day, rule, variant)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS link_rule_visitors (
    link_id INTEGER NOT NULL REFERENCES links(id) ON DELETE CASCADE,
    day TEXT NOT NULL,
    rule INTEGER NOT NULL,
    variant INTEGER NOT NULL,
    visitor INTEGER NOT NULL,
    PRIMARY KEY (link_id, day, rule, variant, visitor)
) WITHOUT ROWID;
