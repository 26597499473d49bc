-- Learned rules, one row per version. A learn inserts version n+1 only once
-- it has fully succeeded; the newest version is the current one, older ones
-- stay for `spider rules SITE --history`.

CREATE TABLE rule_set (
    rule_set_id INTEGER PRIMARY KEY,
    site_id     INTEGER NOT NULL REFERENCES site (site_id) ON DELETE CASCADE,
    version     INTEGER NOT NULL,
    learned_at  TEXT    NOT NULL,
    pages       INTEGER NOT NULL,
    -- Number of content selectors, exclusions and template strings, for
    -- listings without parsing the JSON.
    content     INTEGER NOT NULL,
    exclude     INTEGER NOT NULL,
    template    INTEGER NOT NULL,
    -- JSON: the rules as in rules/<site>.json, and the learn report.
    rules       TEXT    NOT NULL,
    report      TEXT    NOT NULL,
    UNIQUE (site_id, version)
);
