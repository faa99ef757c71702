-- Twin of SQLite's 0012: link rules (see that file).
CREATE TABLE IF NOT EXISTS link_rules (
    link_id bigint PRIMARY KEY REFERENCES links(id) ON DELETE CASCADE,
    account_id bigint NOT NULL,
    document text NOT NULL,
    human_clicks bigint NOT NULL DEFAULT 0,
    updated_at text COLLATE "C" NOT NULL
);
ALTER TABLE click_rows ADD COLUMN IF NOT EXISTS rule integer;
ALTER TABLE click_rows ADD COLUMN IF NOT EXISTS variant integer;
CREATE TABLE IF NOT EXISTS link_rule_days (
    link_id bigint NOT NULL REFERENCES links(id) ON DELETE CASCADE,
    day text COLLATE "C" NOT NULL,
    rule integer NOT NULL,
    variant integer NOT NULL,
    clicks bigint NOT NULL,
    PRIMARY KEY (link_id, day, rule, variant)
);
CREATE TABLE IF NOT EXISTS link_rule_visitors (
    link_id bigint NOT NULL REFERENCES links(id) ON DELETE CASCADE,
    day text COLLATE "C" NOT NULL,
    rule integer NOT NULL,
    variant integer NOT NULL,
    visitor bigint NOT NULL,
    PRIMARY KEY (link_id, day, rule, variant, visitor)
);
