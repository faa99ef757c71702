-- Hourly rollups (SQLite's 0018): per account its human clicks and dimension values per hour
-- (ts / 3600000), per link its human clicks per hour, and the visitor rollups keyed by the
-- hour of the day as well (24: a visitor of a day whose raw clicks were already deleted).
-- Built here from the raw clicks, in this migration's one transaction.

CREATE TABLE account_hours (
    account_id bigint NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    hour integer NOT NULL,
    clicks integer NOT NULL,
    PRIMARY KEY (account_id, hour)
);

CREATE TABLE account_hour_dimensions (
    account_id bigint NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    dimension smallint NOT NULL,
    hour integer NOT NULL,
    value text COLLATE "C" NOT NULL,
    clicks integer NOT NULL,
    PRIMARY KEY (account_id, dimension, hour, value)
);

CREATE TABLE link_hours (
    link_id bigint NOT NULL REFERENCES links(id) ON DELETE CASCADE,
    hour integer NOT NULL,
    clicks integer NOT NULL,
    PRIMARY KEY (link_id, hour)
);

INSERT INTO account_hours (account_id, hour, clicks)
    SELECT account_id, ts / 3600000, count(*) FROM click_rows WHERE is_bot = 0 GROUP BY 1, 2;
INSERT INTO link_hours (link_id, hour, clicks)
    SELECT link_id, ts / 3600000, count(*) FROM click_rows WHERE is_bot = 0 GROUP BY 1, 2;
INSERT INTO account_hour_dimensions (account_id, dimension, hour, value, clicks)
    SELECT c.account_id, d.dimension, c.ts / 3600000, d.value, count(*)
    FROM click_rows c JOIN user_agents u ON u.id = c.agent_id
    CROSS JOIN LATERAL (VALUES (1, u.device, 'other'), (2, u.browser, 'Other'), (3, u.os, 'Other'),
                               (4, c.country, 'Unknown'), (5, c.referrer, 'Direct'), (6, c.campaign, 'None'))
        AS d(dimension, value, unknown)
    WHERE c.is_bot = 0 AND d.value <> d.unknown
    GROUP BY 1, 2, 3, 4;

-- The visitor rollups by hour: rebuilt from the raw clicks, with the visitors of days whose
-- clicks are gone kept under hour 24.
ALTER TABLE link_visitors ADD COLUMN hour smallint NOT NULL DEFAULT 24;
ALTER TABLE account_visitors ADD COLUMN hour smallint NOT NULL DEFAULT 24;
ALTER TABLE link_visitors DROP CONSTRAINT link_visitors_pkey;
ALTER TABLE account_visitors DROP CONSTRAINT account_visitors_pkey;
-- The rebuild's own writes are not the recorder's: the rollup triggers stand aside meanwhile.
ALTER TABLE link_visitors DISABLE TRIGGER USER;
CREATE TEMPORARY TABLE visitor_hours ON COMMIT DROP AS
    SELECT link_id, to_char(to_timestamp(ts / 1000) AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS day, visitor,
           (ts / 3600000 % 24)::smallint AS hour, min(account_id) AS account_id
    FROM click_rows WHERE is_bot = 0 GROUP BY 1, 2, 3, 4;
DELETE FROM link_visitors v USING visitor_hours h
    WHERE h.link_id = v.link_id AND h.day = v.day AND h.visitor = v.visitor;
INSERT INTO link_visitors (link_id, day, visitor, hour, account_id)
    SELECT link_id, day, visitor, hour, account_id FROM visitor_hours;
DELETE FROM account_visitors;
INSERT INTO account_visitors (account_id, day, visitor, hour, links)
    SELECT account_id, day, visitor, hour, count(*) FROM link_visitors GROUP BY 1, 2, 3, 4;
ALTER TABLE link_visitors ENABLE TRIGGER USER;
ALTER TABLE link_visitors ADD PRIMARY KEY (link_id, day, visitor, hour);
ALTER TABLE account_visitors ADD PRIMARY KEY (account_id, day, visitor, hour);
ALTER TABLE link_visitors ALTER COLUMN hour DROP DEFAULT;
ALTER TABLE account_visitors ALTER COLUMN hour DROP DEFAULT;

-- A (link, day, visitor) is new when every row of it is one this statement added; a visitor
-- counts once a day in link_days and account_days, however many hours of it hold clicks.
CREATE OR REPLACE FUNCTION link_visitors_added() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF copying() THEN
        RETURN NULL;
    END IF;
    UPDATE link_days d SET visitors = d.visitors + a.visitors
        FROM (SELECT k.link_id, k.day, count(*) AS visitors
              FROM (SELECT link_id, day, visitor, count(*) AS hours FROM added GROUP BY 1, 2, 3) k
              WHERE (SELECT count(*) FROM link_visitors v
                     WHERE v.link_id = k.link_id AND v.day = k.day AND v.visitor = k.visitor) = k.hours
              GROUP BY 1, 2) a
        WHERE d.link_id = a.link_id AND d.day = a.day;
    -- The statement's snapshot does not hold the rows its own INSERT adds: a visitor is new
    -- for the day when the snapshot has no row of it at all.
    WITH counted AS (
        INSERT INTO account_visitors AS v (account_id, day, visitor, hour, links)
            SELECT account_id, day, visitor, hour, count(*) FROM added
            GROUP BY account_id, day, visitor, hour ORDER BY account_id, day, visitor, hour
        ON CONFLICT (account_id, day, visitor, hour) DO UPDATE SET links = v.links + excluded.links
        RETURNING v.account_id, v.day, v.visitor, v.xmax = 0 AS is_new
    )
    INSERT INTO account_days AS d (account_id, day, visitors)
        SELECT n.account_id, n.day, count(*)
        FROM (SELECT DISTINCT account_id, day, visitor FROM counted WHERE is_new) n
        WHERE NOT EXISTS (SELECT 1 FROM account_visitors o
                          WHERE o.account_id = n.account_id AND o.day = n.day AND o.visitor = n.visitor)
        GROUP BY 1, 2 ORDER BY 1, 2
    ON CONFLICT (account_id, day) DO UPDATE SET visitors = d.visitors + excluded.visitors;
    RETURN NULL;
END
$$;

CREATE OR REPLACE FUNCTION link_visitors_removed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE account_visitors v SET links = v.links - r.links
        FROM (SELECT account_id, day, visitor, hour, count(*) AS links FROM removed GROUP BY 1, 2, 3, 4) r
        WHERE v.account_id = r.account_id AND v.day = r.day AND v.visitor = r.visitor AND v.hour = r.hour;
    -- The snapshot still holds the rows the DELETE takes: a visitor leaves the day when
    -- every row of it is among them.
    WITH gone AS (
        DELETE FROM account_visitors v USING (SELECT DISTINCT account_id, day, visitor, hour FROM removed) r
            WHERE v.account_id = r.account_id AND v.day = r.day AND v.visitor = r.visitor AND v.hour = r.hour
              AND v.links <= 0
            RETURNING v.account_id, v.day, v.visitor
    )
    UPDATE account_days d SET visitors = d.visitors - g.visitors
        FROM (SELECT x.account_id, x.day, count(*) AS visitors
              FROM (SELECT account_id, day, visitor, count(*) AS hours FROM gone GROUP BY 1, 2, 3) x
              WHERE (SELECT count(*) FROM account_visitors o
                     WHERE o.account_id = x.account_id AND o.day = x.day AND o.visitor = x.visitor) = x.hours
              GROUP BY 1, 2) g
        WHERE d.account_id = g.account_id AND d.day = g.day;
    RETURN NULL;
END
$$;
