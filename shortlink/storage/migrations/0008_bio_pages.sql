-- Bio pages: one public page per account at /@<handle>, listing some of the account's
-- links as buttons, in order. Views are counted per page and UTC day (bots excluded);
-- nothing about a viewer is stored.

CREATE TABLE bio_pages (
    id INTEGER PRIMARY KEY,
    account_id INTEGER NOT NULL UNIQUE REFERENCES accounts(id) ON DELETE CASCADE,
    handle TEXT NOT NULL UNIQUE,         -- lower case: [a-z0-9_-]{3,30}
    title TEXT NOT NULL,
    description TEXT NOT NULL DEFAULT '',
    is_published INTEGER NOT NULL DEFAULT 0,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
);

-- A button is one of the account's links; deleting the link removes its button.
CREATE TABLE bio_buttons (
    page_id INTEGER NOT NULL REFERENCES bio_pages(id) ON DELETE CASCADE,
    link_id INTEGER NOT NULL REFERENCES links(id) ON DELETE CASCADE,
    position INTEGER NOT NULL,
    label TEXT,                          -- NULL: the link's title, else its destination's host
    is_hidden INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (page_id, link_id)
) WITHOUT ROWID;
CREATE INDEX bio_buttons_link ON bio_buttons(link_id);

CREATE TABLE bio_page_days (
    page_id INTEGER NOT NULL REFERENCES bio_pages(id) ON DELETE CASCADE,
    day TEXT NOT NULL,
    views INTEGER NOT NULL,
    PRIMARY KEY (page_id, day)
) WITHOUT ROWID;
