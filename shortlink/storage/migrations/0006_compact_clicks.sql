-- Raw clicks stop repeating large strings: each distinct user agent is stored once, with
-- the device, browser and OS labels it was given, and a click refers to it by number.
-- Visitor hashes become 64-bit integers (8 bytes instead of 32 hex characters) in the
-- clicks and in the visitor rollups. `clicks` stays readable as before, as a view.

CREATE TABLE user_agents (
    id INTEGER PRIMARY KEY,
    text TEXT NOT NULL UNIQUE,
    device TEXT NOT NULL,
    browser TEXT NOT NULL,
    os TEXT NOT NULL
);
INSERT INTO user_agents (text, device, browser, os)
    SELECT user_agent, min(device), min(browser), min(os) FROM clicks GROUP BY user_agent;

CREATE TABLE click_rows (
    id INTEGER PRIMARY KEY,
    link_id INTEGER NOT NULL REFERENCES links(id) ON DELETE CASCADE,
    account_id INTEGER NOT NULL,
    ts INTEGER NOT NULL,                 -- Unix milliseconds, UTC
    agent_id INTEGER NOT NULL,           -- user_agents.id
    country TEXT NOT NULL,
    referrer TEXT NOT NULL,
    campaign TEXT NOT NULL,
    visitor INTEGER NOT NULL,            -- 64 bits of the keyed visitor hash
    is_bot INTEGER NOT NULL
);
INSERT INTO click_rows (id, link_id, account_id, ts, agent_id, country, referrer, campaign, visitor, is_bot)
    SELECT c.id, c.link_id, c.account_id, c.ts, u.id, c.country, c.referrer, c.campaign, hex64(c.visitor_hash),
           c.is_bot
    FROM clicks c JOIN user_agents u ON u.text = c.user_agent ORDER BY c.id;
DROP TABLE clicks;
CREATE INDEX click_rows_link_ts ON click_rows(link_id, ts);
CREATE INDEX click_rows_account_ts ON click_rows(account_id, ts);

CREATE VIEW clicks AS
    SELECT c.id, c.link_id, c.account_id, c.ts, u.device, u.browser, u.os, c.country, c.referrer, c.campaign,
           u.text AS user_agent, c.visitor, c.is_bot
    FROM click_rows c JOIN user_agents u ON u.id = c.agent_id;

-- The visitor rollups, keyed by the integer visitor.
CREATE TABLE link_visitors_compact (
    link_id INTEGER NOT NULL REFERENCES links(id) ON DELETE CASCADE,
    day TEXT NOT NULL,
    visitor INTEGER NOT NULL,
    account_id INTEGER NOT NULL,
    PRIMARY KEY (link_id, day, visitor)
) WITHOUT ROWID;
INSERT INTO link_visitors_compact SELECT link_id, day, hex64(visitor_hash), account_id FROM link_visitors;
DROP TABLE link_visitors;
ALTER TABLE link_visitors_compact RENAME TO link_visitors;

CREATE TABLE account_visitors_compact (
    account_id INTEGER NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    day TEXT NOT NULL,
    visitor INTEGER NOT NULL,
    links INTEGER NOT NULL,
    PRIMARY KEY (account_id, day, visitor)
) WITHOUT ROWID;
INSERT INTO account_visitors_compact SELECT account_id, day, hex64(visitor_hash), links FROM account_visitors;
DROP TABLE account_visitors;
ALTER TABLE account_visitors_compact RENAME TO account_visitors;

-- The triggers of migration 0002, for the new columns (dropping a table drops its triggers).
CREATE TRIGGER link_visitor_added AFTER INSERT ON link_visitors BEGIN
    UPDATE link_days SET visitors = visitors + 1 WHERE link_id = NEW.link_id AND day = NEW.day;
    INSERT INTO account_visitors (account_id, day, visitor, links)
        VALUES (NEW.account_id, NEW.day, NEW.visitor, 1)
        ON CONFLICT (account_id, day, visitor) DO UPDATE SET links = links + 1;
END;

CREATE TRIGGER account_visitor_added AFTER INSERT ON account_visitors BEGIN
    INSERT INTO account_days (account_id, day, visitors) VALUES (NEW.account_id, NEW.day, 1)
        ON CONFLICT (account_id, day) DO UPDATE SET visitors = visitors + 1;
END;

CREATE TRIGGER link_visitor_removed AFTER DELETE ON link_visitors BEGIN
    UPDATE account_visitors SET links = links - 1
        WHERE account_id = OLD.account_id AND day = OLD.day AND visitor = OLD.visitor;
    DELETE FROM account_visitors
        WHERE account_id = OLD.account_id AND day = OLD.day AND visitor = OLD.visitor AND links <= 0;
END;

CREATE TRIGGER account_visitor_removed AFTER DELETE ON account_visitors BEGIN
    UPDATE account_days SET visitors = visitors - 1
        WHERE account_id = OLD.account_id AND day = OLD.day;
END;
