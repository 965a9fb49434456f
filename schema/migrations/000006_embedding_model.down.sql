DROP INDEX IF EXISTS memories_agent_active_sketch;
CREATE INDEX memories_agent_active_sketch
    ON memories (org_id, agent_id) INCLUDE (id, embedding_bits)
    WHERE status = 'active' AND deleted_at IS NULL;
