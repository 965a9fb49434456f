-- Retention: finished jobs and the ledger entries naming them are purged once older than
-- IBEX_JOB_RETENTION_HOURS, oldest first, in bounded batches.
CREATE INDEX memory_write_jobs_finished
    ON memory_write_jobs (finished_at)
    WHERE status IN ('succeeded', 'failed');

-- The ledger entries naming a job (the purge, and the foreign key check when a job goes).
CREATE INDEX memory_idempotency_keys_job
    ON memory_idempotency_keys (org_id, job_id);
