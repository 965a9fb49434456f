-- A person may remove a relationship the pipeline or the escalation worker recorded between
-- two memories ("these are not near duplicates"): the removal is audited here, with who,
-- when, why (a redacted reason) and the removed link's evidence. The content hashes of the
-- pair as it read then let the pipeline leave that pair unlinked when the same texts are
-- written again; a changed text is a new pair. Ids and hashes only; no content. Deleting
-- one of the memories clears the hashes (the deleted text written again is a new pair).
CREATE TABLE memory_relationship_decisions (
    org_id              text        NOT NULL,
    id                  uuid        NOT NULL DEFAULT gen_random_uuid(),
    agent_id            text        NOT NULL,
    source_memory_id    uuid        NOT NULL,
    target_memory_id    uuid        NOT NULL,
    relationship_type   text        NOT NULL,
    action              text        NOT NULL DEFAULT 'removed',
    source_content_hash text,                  -- NULL once either memory was deleted
    target_content_hash text,
    evidence            jsonb       NOT NULL DEFAULT '{}'::jsonb,  -- the removed link's, and who had decided it
    decided_by          text        NOT NULL,
    reason              text,                  -- redacted by the write path's PII analysis, or absent
    decided_at          timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (org_id, id),
    CONSTRAINT memory_relationship_decisions_type_check
        CHECK (relationship_type IN ('near_duplicate_of', 'supersedes', 'contradicts')),
    CONSTRAINT memory_relationship_decisions_action_check CHECK (action = 'removed'),
    CONSTRAINT memory_relationship_decisions_decided_by_shape CHECK (decided_by ~ '^(api_key|cli):.+$')
);
-- The pipeline's question per write with near-duplicate candidates: which texts did a person
-- say this text is not a near duplicate of?
CREATE INDEX memory_relationship_decisions_by_source_hash
    ON memory_relationship_decisions (org_id, agent_id, source_content_hash) WHERE relationship_type = 'near_duplicate_of';
CREATE INDEX memory_relationship_decisions_by_target_hash
    ON memory_relationship_decisions (org_id, agent_id, target_content_hash) WHERE relationship_type = 'near_duplicate_of';
CREATE INDEX memory_relationship_decisions_memories
    ON memory_relationship_decisions (org_id, source_memory_id, target_memory_id);
CREATE INDEX memory_relationship_decisions_targets
    ON memory_relationship_decisions (org_id, target_memory_id);

ALTER TABLE memory_relationship_decisions ENABLE ROW LEVEL SECURITY;
ALTER TABLE memory_relationship_decisions FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON memory_relationship_decisions TO ibex_tenant
    USING (org_id = current_setting('ibex.org_id', true))
    WITH CHECK (org_id = current_setting('ibex.org_id', true));
CREATE POLICY maintenance ON memory_relationship_decisions TO ibex_maint USING (true) WITH CHECK (true);
-- Insert-only for the application, but a deleted memory's hashes are cleared and an agent's
-- erasure leaves no row of its memories.
GRANT SELECT, INSERT, UPDATE (source_content_hash, target_content_hash), DELETE
    ON memory_relationship_decisions TO ibex_tenant;
GRANT SELECT, INSERT ON memory_relationship_decisions TO ibex_maint;
