-- Link ids are never reused. Without AUTOINCREMENT, SQLite gives a new link the id of
-- a deleted one when that was the highest; clicks of the deleted link still queued in
-- memory, or its title fetch still in flight, would then land on the new link, which
-- may belong to another account. Rebuilding `links` with AUTOINCREMENT would mean
-- rebuilding every table that references it; a high-water mark does the same.
CREATE TABLE link_id_high_water (
    singleton INTEGER PRIMARY KEY CHECK (singleton = 1),
    last_id INTEGER NOT NULL
);
INSERT INTO link_id_high_water (singleton, last_id) SELECT 1, coalesce(max(id), 0) FROM links;
CREATE TRIGGER link_id_high_water_raised AFTER INSERT ON links
    WHEN new.id > (SELECT last_id FROM link_id_high_water)
BEGIN
    UPDATE link_id_high_water SET last_id = new.id;
END;
