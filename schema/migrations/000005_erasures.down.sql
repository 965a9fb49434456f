DROP INDEX IF EXISTS memory_conflict_escalations_candidate;
DROP INDEX IF EXISTS memory_write_jobs_agent;
DROP INDEX IF EXISTS memories_agent;
DROP INDEX IF EXISTS memory_review_decisions_agent;
REVOKE DELETE ON memory_review_decisions FROM ibex_tenant;
DROP TABLE IF EXISTS memory_erasures;
