-- What a server caches from the database (a link's redirect, its rules and app, bio pages, custom
-- domains), counted: each commit changing any of it raises data_changes.version in the same
-- transaction, and every server polls the number once a second (storage.accounts.data_version),
-- as on PostgreSQL since its 0006. PRAGMA data_version, polled before, moves on every commit of
-- another connection, so the webhook delivering process's commits emptied the caches each second.
-- Click batches never count (links.click_count, link_rules.human_clicks). SQLite triggers run per
-- row: a statement changing many links raises the number as many times, in one transaction.
CREATE TABLE IF NOT EXISTS data_changes (
    singleton INTEGER PRIMARY KEY CHECK (singleton = 1),
    version INTEGER NOT NULL
);
INSERT OR IGNORE INTO data_changes VALUES (1, 0);

CREATE TRIGGER IF NOT EXISTS links_added AFTER INSERT ON links BEGIN
    UPDATE data_changes SET version = version + 1;
END;

CREATE TRIGGER IF NOT EXISTS links_removed AFTER DELETE ON links BEGIN
    UPDATE data_changes SET version = version + 1;
END;

CREATE TRIGGER IF NOT EXISTS links_changed AFTER UPDATE OF account_id, short_code, original_url, platform, title, ios_url, android_url, is_active, expires_at, password_hash ON links BEGIN
    UPDATE data_changes SET version = version + 1;
END;

CREATE TRIGGER IF NOT EXISTS domains_added AFTER INSERT ON domains BEGIN
    UPDATE data_changes SET version = version + 1;
END;

CREATE TRIGGER IF NOT EXISTS domains_changed AFTER UPDATE ON domains BEGIN
    UPDATE data_changes SET version = version + 1;
END;

CREATE TRIGGER IF NOT EXISTS domains_removed AFTER DELETE ON domains BEGIN
    UPDATE data_changes SET version = version + 1;
END;

CREATE TRIGGER IF NOT EXISTS bio_pages_added AFTER INSERT ON bio_pages BEGIN
    UPDATE data_changes SET version = version + 1;
END;

CREATE TRIGGER IF NOT EXISTS bio_pages_changed AFTER UPDATE ON bio_pages BEGIN
    UPDATE data_changes SET version = version + 1;
END;

CREATE TRIGGER IF NOT EXISTS bio_pages_removed AFTER DELETE ON bio_pages BEGIN
    UPDATE data_changes SET version = version + 1;
END;

CREATE TRIGGER IF NOT EXISTS bio_buttons_added AFTER INSERT ON bio_buttons BEGIN
    UPDATE data_changes SET version = version + 1;
END;

CREATE TRIGGER IF NOT EXISTS bio_buttons_changed AFTER UPDATE ON bio_buttons BEGIN
    UPDATE data_changes SET version = version + 1;
END;

CREATE TRIGGER IF NOT EXISTS bio_buttons_removed AFTER DELETE ON bio_buttons BEGIN
    UPDATE data_changes SET version = version + 1;
END;

CREATE TRIGGER IF NOT EXISTS link_apps_added AFTER INSERT ON link_apps BEGIN
    UPDATE data_changes SET version = version + 1;
END;

CREATE TRIGGER IF NOT EXISTS link_apps_changed AFTER UPDATE ON link_apps BEGIN
    UPDATE data_changes SET version = version + 1;
END;

CREATE TRIGGER IF NOT EXISTS link_apps_removed AFTER DELETE ON link_apps BEGIN
    UPDATE data_changes SET version = version + 1;
END;

CREATE TRIGGER IF NOT EXISTS link_rules_added AFTER INSERT ON link_rules BEGIN
    UPDATE data_changes SET version = version + 1;
END;

CREATE TRIGGER IF NOT EXISTS link_rules_removed AFTER DELETE ON link_rules BEGIN
    UPDATE data_changes SET version = version + 1;
END;

CREATE TRIGGER IF NOT EXISTS link_rules_changed AFTER UPDATE OF document ON link_rules BEGIN
    UPDATE data_changes SET version = version + 1;
END;

CREATE TRIGGER IF NOT EXISTS apps_changed AFTER UPDATE OF name, ios_app_store_id, android_package ON apps BEGIN
    UPDATE data_changes SET version = version + 1;
END;

CREATE TRIGGER IF NOT EXISTS apps_removed AFTER DELETE ON apps BEGIN
    UPDATE data_changes SET version = version + 1;
END;
