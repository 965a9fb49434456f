-- Per-org back-pressure counts an org's unfinished jobs before each new write (cached for
-- IBEX_BACKLOG_CACHE_SECONDS): an index over unfinished jobs by org.
CREATE INDEX memory_write_jobs_org_unfinished
    ON memory_write_jobs (org_id)
    WHERE status IN ('queued', 'running');
