-- Quarantine review and deletion: a reviewer releases a quarantined memory (through the
-- pipeline, as a job) or deletes it; either is audited. A deleted memory stays as a tombstone
-- (ids and times, no content); escalations naming it end withdrawn, decided by the system.

-- A release is a job of record too: it carries the memory it releases. One at a time per memory.
ALTER TABLE memory_write_jobs
    ADD COLUMN release_of uuid;
CREATE UNIQUE INDEX memory_write_jobs_one_release
    ON memory_write_jobs (org_id, release_of)
    WHERE release_of IS NOT NULL AND status IN ('queued', 'running');
ALTER TABLE memory_write_jobs
    DROP CONSTRAINT memory_write_jobs_outcome_check,
    ADD CONSTRAINT memory_write_jobs_outcome_check
        CHECK (outcome IS NULL OR outcome IN ('created', 'exact_duplicate', 'released'));

-- The review queue: one tenant's quarantined memories, oldest first.
CREATE INDEX memories_quarantine
    ON memories (org_id, created_at, id)
    WHERE status = 'quarantined' AND deleted_at IS NULL;

-- A deleted memory keeps no content: the tombstone invariant, in SQL.
ALTER TABLE memories
    ADD CONSTRAINT memories_deleted_is_tombstone
        CHECK (status <> 'deleted' OR (deleted_at IS NOT NULL AND content = '' AND embedding IS NULL
                                       AND subject_key IS NULL AND metadata = '{}'::jsonb));

-- Who decided what about a quarantined or deleted memory, when, and why. Ids and a redacted
-- note only; the memory may be gone (no foreign key).
CREATE TABLE memory_review_decisions (
    org_id           text        NOT NULL,
    id               uuid        NOT NULL DEFAULT gen_random_uuid(),
    agent_id         text        NOT NULL,
    memory_id        uuid        NOT NULL,
    action           text        NOT NULL,
    outcome          text        NOT NULL,
    result_memory_id uuid,                  -- release: the active memory it became or duplicates
    decided_by       text        NOT NULL,
    note             text,                  -- redacted by the PII stage (release) or absent
    job_id           uuid,
    decided_at       timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (org_id, id),
    CONSTRAINT memory_review_decisions_action_check CHECK (action IN ('release', 'delete')),
    CONSTRAINT memory_review_decisions_outcome_check
        CHECK ((action = 'release' AND outcome IN ('released', 'exact_duplicate'))
               OR (action = 'delete' AND outcome = 'deleted')),
    CONSTRAINT memory_review_decisions_decided_by_shape CHECK (decided_by ~ '^(api_key|cli|system):.+$')
);
CREATE INDEX memory_review_decisions_memory ON memory_review_decisions (org_id, memory_id, decided_at);
ALTER TABLE memory_review_decisions ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON memory_review_decisions TO ibex_tenant
    USING (org_id = current_setting('ibex.org_id', true))
    WITH CHECK (org_id = current_setting('ibex.org_id', true));
CREATE POLICY maintenance ON memory_review_decisions TO ibex_maint USING (true) WITH CHECK (true);
GRANT SELECT, INSERT ON memory_review_decisions TO ibex_tenant, ibex_maint;

-- An escalation whose memory was deleted ends resolved, outcome withdrawn, by the system.
ALTER TABLE memory_conflict_escalations
    DROP CONSTRAINT memory_conflict_escalations_outcome_check,
    ADD CONSTRAINT memory_conflict_escalations_outcome_check
        CHECK (outcome IS NULL OR outcome IN ('supersedes', 'contradicts', 'compatible', 'needs_review', 'withdrawn')),
    DROP CONSTRAINT memory_conflict_escalations_outcome_matches_status,
    ADD CONSTRAINT memory_conflict_escalations_outcome_matches_status
        CHECK ((status = 'resolved' AND outcome IN ('supersedes', 'contradicts', 'compatible', 'withdrawn'))
               OR (status = 'needs_review' AND outcome = 'needs_review')
               OR status IN ('pending', 'claimed', 'dead')),
    DROP CONSTRAINT memory_conflict_escalations_decided_by_shape,
    ADD CONSTRAINT memory_conflict_escalations_decided_by_shape
        CHECK (decided_by IS NULL OR decided_by ~ '^(classifier|api_key|cli|system):.+$');
ALTER TABLE memory_conflict_decisions
    DROP CONSTRAINT memory_conflict_decisions_outcome_check,
    ADD CONSTRAINT memory_conflict_decisions_outcome_check
        CHECK (outcome IN ('supersedes', 'contradicts', 'compatible', 'needs_review', 'withdrawn')),
    DROP CONSTRAINT memory_conflict_decisions_decided_by_shape,
    ADD CONSTRAINT memory_conflict_decisions_decided_by_shape
        CHECK (decided_by ~ '^(classifier|api_key|cli|system):.+$');
