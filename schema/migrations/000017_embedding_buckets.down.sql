CREATE INDEX IF NOT EXISTS memories_agent_active_sketch
    ON memories (org_id, agent_id, embedding_model) INCLUDE (id, embedding_bits)
    WHERE status = 'active' AND deleted_at IS NULL;
DROP INDEX IF EXISTS memories_agent_bucket_sketch;
DROP TRIGGER IF EXISTS memories_embedding_bucket ON memories;
DROP FUNCTION IF EXISTS memories_embedding_bucket();
ALTER TABLE memories DROP COLUMN IF EXISTS embedding_bucket;
DROP TABLE IF EXISTS embedding_centroids;
