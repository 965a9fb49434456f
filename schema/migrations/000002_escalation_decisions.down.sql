DROP TABLE IF EXISTS memory_conflict_decisions;
DROP INDEX IF EXISTS memory_conflict_escalations_org_status;
ALTER TABLE memory_conflict_escalations
    DROP CONSTRAINT IF EXISTS memory_conflict_escalations_decided_by_shape,
    DROP CONSTRAINT IF EXISTS memory_conflict_escalations_dead_has_error,
    DROP CONSTRAINT IF EXISTS memory_conflict_escalations_outcome_matches_status,
    DROP CONSTRAINT IF EXISTS memory_conflict_escalations_decision_complete,
    DROP CONSTRAINT IF EXISTS memory_conflict_escalations_claim_has_lease,
    DROP COLUMN IF EXISTS lease_owner;
