-- A link's share of an account's partial day (its top links) is counted from raw clicks, as
-- its own partial days already are: a link's hours hold a few clicks each, and their rollup
-- cost more bytes per click than any query saved (docs/performance.md, "Analytics at scale").
DROP TABLE IF EXISTS link_hours;
