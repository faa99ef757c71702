-- Hourly rollups, so that a range starting or ending within a day is read from them plus at
-- most two partial hours of raw clicks (analytics/report.py). An hour is ts / 3600000, hours
-- since the epoch. Per account: human clicks and each dimension's values (the unknown labels
-- not stored, as in the daily rollups); per link: human clicks only, what an account's top
-- links need (a link's own report reads its few partial-day clicks raw: docs/performance.md).
-- The visitor rollups gain the hour of the day (0-23) a visitor clicked in, one row per hour,
-- so a part of a day counts its distinct visitors exactly; 24 marks a visitor of a day whose
-- raw clicks were deleted before this migration (its hour is not known).
-- Built here from the raw clicks, in this migration's one transaction.

CREATE TABLE IF NOT EXISTS account_hours (
    account_id INTEGER NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    hour INTEGER NOT NULL,
    clicks INTEGER NOT NULL,
    PRIMARY KEY (account_id, hour)
) WITHOUT ROWID;

CREATE TABLE IF NOT EXISTS account_hour_dimensions (
    account_id INTEGER NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    dimension INTEGER NOT NULL,
    hour INTEGER NOT NULL,
    value TEXT NOT NULL,
    clicks INTEGER NOT NULL,
    PRIMARY KEY (account_id, dimension, hour, value)
) WITHOUT ROWID;

CREATE TABLE IF NOT EXISTS link_hours (
    link_id INTEGER NOT NULL REFERENCES links(id) ON DELETE CASCADE,
    hour INTEGER NOT NULL,
    clicks INTEGER NOT NULL,
    PRIMARY KEY (link_id, hour)
) WITHOUT ROWID;

INSERT INTO account_hours (account_id, hour, clicks)
    SELECT account_id, ts / 3600000, count(*) FROM click_rows WHERE is_bot = 0 GROUP BY 1, 2 ORDER BY 1, 2;
INSERT INTO link_hours (link_id, hour, clicks)
    SELECT link_id, ts / 3600000, count(*) FROM click_rows WHERE is_bot = 0 GROUP BY 1, 2 ORDER BY 1, 2;
INSERT INTO account_hour_dimensions (account_id, dimension, hour, value, clicks)
    SELECT account_id, dimension, hour, value, count(*) FROM (
        SELECT c.account_id, 1 AS dimension, c.ts / 3600000 AS hour, u.device AS value
            FROM click_rows c JOIN user_agents u ON u.id = c.agent_id WHERE c.is_bot = 0 AND u.device <> 'other'
        UNION ALL SELECT c.account_id, 2, c.ts / 3600000, u.browser
            FROM click_rows c JOIN user_agents u ON u.id = c.agent_id WHERE c.is_bot = 0 AND u.browser <> 'Other'
        UNION ALL SELECT c.account_id, 3, c.ts / 3600000, u.os
            FROM click_rows c JOIN user_agents u ON u.id = c.agent_id WHERE c.is_bot = 0 AND u.os <> 'Other'
        UNION ALL SELECT account_id, 4, ts / 3600000, country FROM click_rows WHERE is_bot = 0 AND country <> 'Unknown'
        UNION ALL SELECT account_id, 5, ts / 3600000, referrer FROM click_rows WHERE is_bot = 0 AND referrer <> 'Direct'
        UNION ALL SELECT account_id, 6, ts / 3600000, campaign FROM click_rows WHERE is_bot = 0 AND campaign <> 'None'
    ) GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3, 4;

CREATE TABLE link_visitors_by_hour (
    link_id INTEGER NOT NULL REFERENCES links(id) ON DELETE CASCADE,
    day TEXT NOT NULL,
    visitor INTEGER NOT NULL,
    hour INTEGER NOT NULL,               -- of the day, 0-23; 24: not known
    account_id INTEGER NOT NULL,
    PRIMARY KEY (link_id, day, visitor, hour)
) WITHOUT ROWID;
INSERT INTO link_visitors_by_hour (link_id, day, visitor, hour, account_id)
    SELECT link_id, date(ts / 1000, 'unixepoch'), visitor, ts / 3600000 % 24, min(account_id)
    FROM click_rows WHERE is_bot = 0 GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3, 4;
INSERT INTO link_visitors_by_hour (link_id, day, visitor, hour, account_id)
    SELECT v.link_id, v.day, v.visitor, 24, v.account_id FROM link_visitors AS v
    WHERE NOT EXISTS (SELECT 1 FROM link_visitors_by_hour AS h
                      WHERE h.link_id = v.link_id AND h.day = v.day AND h.visitor = v.visitor);
DROP TABLE link_visitors;
ALTER TABLE link_visitors_by_hour RENAME TO link_visitors;

-- links: how many of the account's links the visitor clicked in that hour.
CREATE TABLE account_visitors_by_hour (
    account_id INTEGER NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    day TEXT NOT NULL,
    visitor INTEGER NOT NULL,
    hour INTEGER NOT NULL,
    links INTEGER NOT NULL,
    PRIMARY KEY (account_id, day, visitor, hour)
) WITHOUT ROWID;
INSERT INTO account_visitors_by_hour (account_id, day, visitor, hour, links)
    SELECT account_id, day, visitor, hour, count(*) FROM link_visitors GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3, 4;
DROP TABLE account_visitors;
ALTER TABLE account_visitors_by_hour RENAME TO account_visitors;

-- 0006's triggers for the hour: a visitor counts once a day in link_days and account_days,
-- however many hours of it hold their clicks.
CREATE TRIGGER link_visitor_added AFTER INSERT ON link_visitors BEGIN
    UPDATE link_days SET visitors = visitors + 1 WHERE link_id = NEW.link_id AND day = NEW.day
        AND NOT EXISTS (SELECT 1 FROM link_visitors WHERE link_id = NEW.link_id AND day = NEW.day
                        AND visitor = NEW.visitor AND hour <> NEW.hour);
    INSERT INTO account_visitors (account_id, day, visitor, hour, links)
        VALUES (NEW.account_id, NEW.day, NEW.visitor, NEW.hour, 1)
        ON CONFLICT (account_id, day, visitor, hour) DO UPDATE SET links = links + 1;
END;

CREATE TRIGGER account_visitor_added AFTER INSERT ON account_visitors
    WHEN NOT EXISTS (SELECT 1 FROM account_visitors WHERE account_id = NEW.account_id AND day = NEW.day
                     AND visitor = NEW.visitor AND hour <> NEW.hour)
BEGIN
    INSERT INTO account_days (account_id, day, visitors) VALUES (NEW.account_id, NEW.day, 1)
        ON CONFLICT (account_id, day) DO UPDATE SET visitors = visitors + 1;
END;

CREATE TRIGGER link_visitor_removed AFTER DELETE ON link_visitors BEGIN
    UPDATE account_visitors SET links = links - 1
        WHERE account_id = OLD.account_id AND day = OLD.day AND visitor = OLD.visitor AND hour = OLD.hour;
    DELETE FROM account_visitors
        WHERE account_id = OLD.account_id AND day = OLD.day AND visitor = OLD.visitor AND hour = OLD.hour
          AND links <= 0;
END;

CREATE TRIGGER account_visitor_removed AFTER DELETE ON account_visitors
    WHEN NOT EXISTS (SELECT 1 FROM account_visitors WHERE account_id = OLD.account_id AND day = OLD.day
                     AND visitor = OLD.visitor)
BEGIN
    UPDATE account_days SET visitors = visitors - 1 WHERE account_id = OLD.account_id AND day = OLD.day;
END;
