-- Near-duplicate search compares vectors of one embedding model only: the agent sketch
-- index is keyed on the model too, so the search's index-only scan reads the rows of the
-- configured model and nothing else (rows of another model wait for ibex reembed).
DROP INDEX IF EXISTS memories_agent_active_sketch;
CREATE INDEX memories_agent_active_sketch
    ON memories (org_id, agent_id, embedding_model) INCLUDE (id, embedding_bits)
    WHERE status = 'active' AND deleted_at IS NULL;
