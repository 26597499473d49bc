-- PostgreSQL's 0004 switches its large text columns to lz4 compression.
-- SQLite does not compress; this keeps the two folders in lock-step.
SELECT 1;
