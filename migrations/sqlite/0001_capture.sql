-- Sites and their page captures. A capture is one rendered page; the same
-- (site, url) captured again replaces the older row (see store::captures).

CREATE TABLE site (
    site_id    INTEGER PRIMARY KEY,
    name       TEXT    NOT NULL UNIQUE,
    created_at TEXT    NOT NULL
);

CREATE TABLE capture (
    capture_id      INTEGER PRIMARY KEY,
    site_id         INTEGER NOT NULL REFERENCES site (site_id) ON DELETE CASCADE,
    url             TEXT    NOT NULL,
    captured_at     TEXT    NOT NULL,
    stored_at       TEXT    NOT NULL,
    viewport_width  INTEGER NOT NULL,
    viewport_height INTEGER NOT NULL,
    lang            TEXT,
    title           TEXT,
    agent           TEXT,
    truncated       INTEGER NOT NULL,
    block_count     INTEGER NOT NULL,
    -- JSON: the capture's `meta` object and `blocks` array, as in the schema.
    meta            TEXT    NOT NULL,
    blocks          TEXT    NOT NULL,
    -- The page source as served, decoded to text.
    html            TEXT    NOT NULL,
    UNIQUE (site_id, url)
);
