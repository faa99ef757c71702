-- Daily rollups of human clicks (bots are only in clicks and links.click_count),
-- written by the click recorder in the same transaction as the raw clicks.
-- Analytics read whole UTC days from here and partial days from clicks.
-- Account tables hold the sums over the account's links, so account answers do
-- not scan every link; the triggers below keep them equal to those sums when a
-- link (and, by cascade, its rollups) is deleted.

-- Per link and day: human clicks and distinct visitors.
CREATE TABLE link_days (
    link_id INTEGER NOT NULL REFERENCES links(id) ON DELETE CASCADE,
    day TEXT NOT NULL,
    account_id INTEGER NOT NULL,
    clicks INTEGER NOT NULL DEFAULT 0,
    visitors INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (link_id, day)
) WITHOUT ROWID;
CREATE INDEX link_days_account ON link_days(account_id, day, link_id, clicks);

-- Per link, day, dimension and value. dimension: 1 device, 2 browser, 3 os,
-- 4 country, 5 referrer, 6 campaign.
CREATE TABLE link_dimensions (
    link_id INTEGER NOT NULL REFERENCES links(id) ON DELETE CASCADE,
    day TEXT NOT NULL,
    dimension INTEGER NOT NULL,
    value TEXT NOT NULL,
    account_id INTEGER NOT NULL,
    clicks INTEGER NOT NULL,
    PRIMARY KEY (link_id, dimension, day, value)
) WITHOUT ROWID;

-- Distinct visitor hashes per link and day.
CREATE TABLE link_visitors (
    link_id INTEGER NOT NULL REFERENCES links(id) ON DELETE CASCADE,
    day TEXT NOT NULL,
    visitor_hash TEXT NOT NULL,
    account_id INTEGER NOT NULL,
    PRIMARY KEY (link_id, day, visitor_hash)
) WITHOUT ROWID;

CREATE TABLE account_days (
    account_id INTEGER NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    day TEXT NOT NULL,
    clicks INTEGER NOT NULL DEFAULT 0,
    visitors INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (account_id, day)
) WITHOUT ROWID;

CREATE TABLE account_dimensions (
    account_id INTEGER NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    day TEXT NOT NULL,
    dimension INTEGER NOT NULL,
    value TEXT NOT NULL,
    clicks INTEGER NOT NULL,
    PRIMARY KEY (account_id, dimension, day, value)
) WITHOUT ROWID;

-- Distinct visitors per account and day; links = how many of the account's
-- links the visitor clicked that day (so deleting one link keeps the others' count).
CREATE TABLE account_visitors (
    account_id INTEGER NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    day TEXT NOT NULL,
    visitor_hash TEXT NOT NULL,
    links INTEGER NOT NULL,
    PRIMARY KEY (account_id, day, visitor_hash)
) WITHOUT ROWID;

-- A visitor new for a link and day: count it there and in the account.
CREATE TRIGGER link_visitor_added AFTER INSERT ON link_visitors BEGIN
    UPDATE link_days SET visitors = visitors + 1 WHERE link_id = NEW.link_id AND day = NEW.day;
    INSERT INTO account_visitors (account_id, day, visitor_hash, links)
        VALUES (NEW.account_id, NEW.day, NEW.visitor_hash, 1)
        ON CONFLICT (account_id, day, visitor_hash) DO UPDATE SET links = links + 1;
END;

CREATE TRIGGER account_visitor_added AFTER INSERT ON account_visitors BEGIN
    INSERT INTO account_days (account_id, day, visitors) VALUES (NEW.account_id, NEW.day, 1)
        ON CONFLICT (account_id, day) DO UPDATE SET visitors = visitors + 1;
END;

-- Deleting a link cascades to its rollups; take them out of the account's sums.
CREATE TRIGGER link_day_removed AFTER DELETE ON link_days BEGIN
    UPDATE account_days SET clicks = clicks - OLD.clicks
        WHERE account_id = OLD.account_id AND day = OLD.day;
END;

CREATE TRIGGER link_dimension_removed AFTER DELETE ON link_dimensions BEGIN
    UPDATE account_dimensions SET clicks = clicks - OLD.clicks
        WHERE account_id = OLD.account_id AND dimension = OLD.dimension AND day = OLD.day
          AND value = OLD.value;
    DELETE FROM account_dimensions
        WHERE account_id = OLD.account_id AND dimension = OLD.dimension AND day = OLD.day
          AND value = OLD.value AND clicks <= 0;
END;

CREATE TRIGGER link_visitor_removed AFTER DELETE ON link_visitors BEGIN
    UPDATE account_visitors SET links = links - 1
        WHERE account_id = OLD.account_id AND day = OLD.day AND visitor_hash = OLD.visitor_hash;
    DELETE FROM account_visitors
        WHERE account_id = OLD.account_id AND day = OLD.day AND visitor_hash = OLD.visitor_hash
          AND links <= 0;
END;

CREATE TRIGGER account_visitor_removed AFTER DELETE ON account_visitors BEGIN
    UPDATE account_days SET visitors = visitors - 1
        WHERE account_id = OLD.account_id AND day = OLD.day;
END;
