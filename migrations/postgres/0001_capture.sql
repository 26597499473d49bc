-- Sites and their page captures. A capture is one rendered page; the same
-- (site, url) captured again replaces the older row (see store::captures).

CREATE TABLE site (
    site_id    BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    name       TEXT        NOT NULL UNIQUE,
    created_at TIMESTAMPTZ NOT NULL
);

CREATE TABLE capture (
    capture_id      BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    site_id         BIGINT      NOT NULL REFERENCES site (site_id) ON DELETE CASCADE,
    url             TEXT        NOT NULL,
    captured_at     TIMESTAMPTZ NOT NULL,
    stored_at       TIMESTAMPTZ NOT NULL,
    viewport_width  BIGINT      NOT NULL,
    viewport_height BIGINT      NOT NULL,
    lang            TEXT,
    title           TEXT,
    agent           TEXT,
    truncated       BOOLEAN     NOT NULL,
    block_count     BIGINT      NOT NULL,
    -- JSON kept as text, byte for byte: jsonb would reject \u0000 in page
    -- text and re-order keys; nothing queries inside it.
    meta            TEXT        NOT NULL,
    blocks          TEXT        NOT NULL,
    -- The page source as served, decoded to text.
    html            TEXT        NOT NULL,
    UNIQUE (site_id, url)
);
