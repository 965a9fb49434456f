DROP INDEX IF EXISTS memory_idempotency_keys_job;
DROP INDEX IF EXISTS memory_write_jobs_finished;
