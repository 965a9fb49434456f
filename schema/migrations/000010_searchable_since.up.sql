-- The corpus version at which a memory last became searchable (inserted or released active,
-- or re-embedded), so that persist re-checks near duplicates under the agent's corpus lock
-- against only the memories that arrived after its unlocked search. NULL for rows stored
-- before this column: they predate every search that can still be in flight.
ALTER TABLE memories ADD COLUMN searchable_since bigint;
CREATE INDEX memories_agent_searchable_since
    ON memories (org_id, agent_id, searchable_since)
    WHERE status = 'active' AND deleted_at IS NULL AND searchable_since IS NOT NULL;
