-- Escalation worker: who holds a claim, an append-only decision log, and the invariants of
-- a decided escalation, in SQL (a decision without an author, a reason or a time is refused).

ALTER TABLE memory_conflict_escalations
    ADD COLUMN lease_owner text;  -- the poller holding the claim (name or host:pid), for operators

ALTER TABLE memory_conflict_escalations
    ADD CONSTRAINT memory_conflict_escalations_claim_has_lease
        CHECK (status <> 'claimed' OR (lease_token IS NOT NULL AND lease_expires_at IS NOT NULL)),
    ADD CONSTRAINT memory_conflict_escalations_decision_complete
        CHECK (status NOT IN ('resolved', 'needs_review')
               OR (outcome IS NOT NULL AND decided_by IS NOT NULL AND decision_reason IS NOT NULL
                   AND decided_at IS NOT NULL)),
    ADD CONSTRAINT memory_conflict_escalations_outcome_matches_status
        CHECK ((status = 'resolved' AND outcome IN ('supersedes', 'contradicts', 'compatible'))
               OR (status = 'needs_review' AND outcome = 'needs_review')
               OR status IN ('pending', 'claimed', 'dead')),
    ADD CONSTRAINT memory_conflict_escalations_dead_has_error
        CHECK (status <> 'dead' OR last_error IS NOT NULL),
    -- classifier:<name>@<version>, api_key:<key id>, cli:<user>
    ADD CONSTRAINT memory_conflict_escalations_decided_by_shape
        CHECK (decided_by IS NULL OR decided_by ~ '^(classifier|api_key|cli):.+$');

-- Review queues and listings: one tenant's escalations by status, oldest first.
CREATE INDEX memory_conflict_escalations_org_status
    ON memory_conflict_escalations (org_id, status, created_at, id);

-- Every decision ever taken on an escalation, automatic or human, in the transaction that
-- applied it. The escalation row holds the decision in force; this log keeps the history
-- (an automatic needs_review followed by a person's resolution is two rows).
CREATE TABLE memory_conflict_decisions (
    org_id        text        NOT NULL,
    id            uuid        NOT NULL DEFAULT gen_random_uuid(),
    escalation_id uuid        NOT NULL,
    outcome       text        NOT NULL,
    decided_by    text        NOT NULL,
    reason        text        NOT NULL,
    details       jsonb       NOT NULL DEFAULT '{}'::jsonb,  -- classifier, version, rule, poller: never content
    decided_at    timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (org_id, id),
    FOREIGN KEY (org_id, escalation_id) REFERENCES memory_conflict_escalations (org_id, id) ON DELETE CASCADE,
    CONSTRAINT memory_conflict_decisions_outcome_check
        CHECK (outcome IN ('supersedes', 'contradicts', 'compatible', 'needs_review')),
    CONSTRAINT memory_conflict_decisions_decided_by_shape
        CHECK (decided_by ~ '^(classifier|api_key|cli):.+$')
);
-- Exactly once, held by the database: one final decision per escalation, and at most one
-- hand-over to a person.
CREATE UNIQUE INDEX memory_conflict_decisions_one_final
    ON memory_conflict_decisions (org_id, escalation_id) WHERE outcome <> 'needs_review';
CREATE UNIQUE INDEX memory_conflict_decisions_one_review
    ON memory_conflict_decisions (org_id, escalation_id) WHERE outcome = 'needs_review';

ALTER TABLE memory_conflict_decisions ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON memory_conflict_decisions TO ibex_tenant
    USING (org_id = current_setting('ibex.org_id', true))
    WITH CHECK (org_id = current_setting('ibex.org_id', true));
CREATE POLICY maintenance ON memory_conflict_decisions TO ibex_maint USING (true) WITH CHECK (true);
-- Append-only for the application: no UPDATE or DELETE (cascades from a deleted memory still apply).
GRANT SELECT, INSERT ON memory_conflict_decisions TO ibex_tenant, ibex_maint;
