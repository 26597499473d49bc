-- Upload tokens. Only a SHA-256 of each token is kept: the token itself is
-- shown once, by `spider token create`.
CREATE TABLE api_token (
    token_id   INTEGER PRIMARY KEY,
    name       TEXT    NOT NULL UNIQUE,
    hash       TEXT    NOT NULL UNIQUE,
    created_at TEXT    NOT NULL
);

-- The learning queue: at most one job per site, so uploads that arrive while
-- a site is queued change nothing and uploads that arrive while it is being
-- learned set `rerun`, which turns into one follow-up learn. A worker owns a
-- running job until `lease_until` (Unix milliseconds), which it extends while
-- it learns; a job whose lease ran out belongs to a worker that died and is
-- claimed again.
CREATE TABLE learn_job (
    site_id       INTEGER PRIMARY KEY REFERENCES site (site_id) ON DELETE CASCADE,
    state         TEXT    NOT NULL CHECK (state IN ('queued', 'running', 'done', 'failed')),
    rerun         INTEGER NOT NULL DEFAULT 0,
    requested_at  TEXT    NOT NULL,
    started_at    TEXT,
    finished_at   TEXT,
    worker        TEXT,
    lease_until   INTEGER,
    attempts      INTEGER NOT NULL DEFAULT 0,
    error         TEXT,
    rules_version INTEGER
);

CREATE INDEX learn_job_ready ON learn_job (state, requested_at);
