-- Learned rules, one row per version. A learn inserts version n+1 only once
-- it has fully succeeded; the newest version is the current one, older ones
-- stay for `spider rules SITE --history`.

CREATE TABLE rule_set (
    rule_set_id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    site_id     BIGINT      NOT NULL REFERENCES site (site_id) ON DELETE CASCADE,
    version     BIGINT      NOT NULL,
    learned_at  TIMESTAMPTZ NOT NULL,
    pages       BIGINT      NOT NULL,
    -- Number of content selectors, exclusions and template strings, for
    -- listings without parsing the JSON.
    content     BIGINT      NOT NULL,
    exclude     BIGINT      NOT NULL,
    template    BIGINT      NOT NULL,
    -- JSON: the rules as in rules/<site>.json, and the learn report.
    rules       TEXT        NOT NULL,
    report      TEXT        NOT NULL,
    UNIQUE (site_id, version)
);
