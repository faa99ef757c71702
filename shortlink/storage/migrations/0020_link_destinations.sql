-- Where a link sends everyone, as it changed (docs/link-rules.md, "Where a link goes"): one row
-- per change, kept with the link and deleted with it. url is the new address, NULL when visitors
-- went back to the link's originalUrl; door is how the change was made (api, dashboard, mcp, cli).
-- The visitor path never reads it: the address itself is the rules document's first rule.
CREATE TABLE IF NOT EXISTS link_destinations (
    id INTEGER PRIMARY KEY,
    link_id INTEGER NOT NULL REFERENCES links(id) ON DELETE CASCADE,
    at TEXT NOT NULL,
    url TEXT,
    door TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS link_destinations_link ON link_destinations(link_id, id);
