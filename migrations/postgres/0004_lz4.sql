-- Page sources and block lists are large TOASTed text. PostgreSQL's default
-- pglz compression was half of the server's CPU under concurrent uploads
-- (BENCHMARKS.md, "Upload throughput"); lz4 compresses several times
-- faster. Only where this server was built with lz4: elsewhere nothing
-- changes. Rows already stored keep their compression until rewritten.
DO $$
BEGIN
    IF EXISTS (
        SELECT 1 FROM pg_settings
        WHERE name = 'default_toast_compression' AND 'lz4' = ANY (enumvals)
    ) THEN
        ALTER TABLE capture ALTER COLUMN html SET COMPRESSION lz4,
                            ALTER COLUMN blocks SET COMPRESSION lz4;
    END IF;
END
$$;
