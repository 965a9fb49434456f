DROP INDEX IF EXISTS memory_write_jobs_org_unfinished;
