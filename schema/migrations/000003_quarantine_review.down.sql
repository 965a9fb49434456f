ALTER TABLE memory_conflict_decisions
    DROP CONSTRAINT IF EXISTS memory_conflict_decisions_decided_by_shape,
    ADD CONSTRAINT memory_conflict_decisions_decided_by_shape CHECK (decided_by ~ '^(classifier|api_key|cli):.+$'),
    DROP CONSTRAINT IF EXISTS memory_conflict_decisions_outcome_check,
    ADD CONSTRAINT memory_conflict_decisions_outcome_check
        CHECK (outcome IN ('supersedes', 'contradicts', 'compatible', 'needs_review'));
ALTER TABLE memory_conflict_escalations
    DROP CONSTRAINT IF EXISTS memory_conflict_escalations_decided_by_shape,
    ADD CONSTRAINT memory_conflict_escalations_decided_by_shape
        CHECK (decided_by IS NULL OR decided_by ~ '^(classifier|api_key|cli):.+$'),
    DROP CONSTRAINT IF EXISTS memory_conflict_escalations_outcome_matches_status,
    ADD CONSTRAINT memory_conflict_escalations_outcome_matches_status
        CHECK ((status = 'resolved' AND outcome IN ('supersedes', 'contradicts', 'compatible'))
               OR (status = 'needs_review' AND outcome = 'needs_review')
               OR status IN ('pending', 'claimed', 'dead')),
    DROP CONSTRAINT IF EXISTS memory_conflict_escalations_outcome_check,
    ADD CONSTRAINT memory_conflict_escalations_outcome_check
        CHECK (outcome IS NULL OR outcome IN ('supersedes', 'contradicts', 'compatible', 'needs_review'));
DROP TABLE IF EXISTS memory_review_decisions;
ALTER TABLE memories DROP CONSTRAINT IF EXISTS memories_deleted_is_tombstone;
DROP INDEX IF EXISTS memories_quarantine;
ALTER TABLE memory_write_jobs
    DROP CONSTRAINT IF EXISTS memory_write_jobs_outcome_check,
    ADD CONSTRAINT memory_write_jobs_outcome_check
        CHECK (outcome IS NULL OR outcome IN ('created', 'exact_duplicate'));
DROP INDEX IF EXISTS memory_write_jobs_one_release;
ALTER TABLE memory_write_jobs DROP COLUMN IF EXISTS release_of;
