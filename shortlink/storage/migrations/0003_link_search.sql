-- Substring search over destination, title and code without reading every link:
-- an FTS5 trigram index answers "contains" (case-insensitive) for any search
-- text of 3 or more characters. Shorter searches fall back to LIKE.
-- External content: the text lives in `links`; triggers keep the index in step.
-- Only changes to these three columns touch it, never click_count updates.

CREATE VIRTUAL TABLE link_search USING fts5(
    original_url, title, short_code, content = 'links', content_rowid = 'id', tokenize = 'trigram'
);

INSERT INTO link_search (rowid, original_url, title, short_code)
    SELECT id, original_url, title, short_code FROM links;

CREATE TRIGGER link_search_added AFTER INSERT ON links BEGIN
    INSERT INTO link_search (rowid, original_url, title, short_code)
        VALUES (NEW.id, NEW.original_url, NEW.title, NEW.short_code);
END;

CREATE TRIGGER link_search_removed AFTER DELETE ON links BEGIN
    INSERT INTO link_search (link_search, rowid, original_url, title, short_code)
        VALUES ('delete', OLD.id, OLD.original_url, OLD.title, OLD.short_code);
END;

CREATE TRIGGER link_search_changed AFTER UPDATE OF original_url, title, short_code ON links BEGIN
    INSERT INTO link_search (link_search, rowid, original_url, title, short_code)
        VALUES ('delete', OLD.id, OLD.original_url, OLD.title, OLD.short_code);
    INSERT INTO link_search (rowid, original_url, title, short_code)
        VALUES (NEW.id, NEW.original_url, NEW.title, NEW.short_code);
END;
