-- Migration 0019's drop of link_hours undone: counting each probed link's share of an account's
-- partial day from raw clicks made the account's short ranges slower, most of all on PostgreSQL
-- (docs/performance.md, "Analytics at scale"). Rebuilt from the raw clicks, as 0018 built it.
CREATE TABLE IF NOT EXISTS link_hours (
    link_id bigint NOT NULL REFERENCES links(id) ON DELETE CASCADE,
    hour integer NOT NULL,
    clicks integer NOT NULL,
    PRIMARY KEY (link_id, hour)
);
DELETE FROM link_hours;
INSERT INTO link_hours (link_id, hour, clicks)
    SELECT link_id, ts / 3600000, count(*) FROM click_rows WHERE is_bot = 0 GROUP BY 1, 2;
