-- Embedding buckets (issue 17): each memory's embedding is filed under the nearest of a fixed
-- set of centroids of its model's space (k-means over texts the corpus does not hold; shipped
-- with the package and loaded by `ibex migrate`, ibex_worker.adapters.centroids). A large agent's
-- near-duplicate search reads the sketches of the few buckets nearest the query instead of
-- every row of the agent (ibex_worker.store.vectors). The centroids are no tenant's data: one
-- table for every org, read-only to the services.
CREATE TABLE embedding_centroids (
    model    text        NOT NULL,
    bucket   smallint    NOT NULL,
    centroid vector(384) NOT NULL,
    PRIMARY KEY (model, bucket)
);
GRANT SELECT ON embedding_centroids TO ibex_tenant, ibex_maint;

-- NULL: no centroids for the row's model (or none when it was embedded, see `ibex backfill`);
-- such rows are read by every search of their agent.
ALTER TABLE memories ADD COLUMN embedding_bucket smallint;

-- A writer files the embedding itself (ibex_worker.adapters.centroids.Buckets: one product of a
-- matrix, where this function's scan of every centroid costs about a millisecond); for any
-- writer that does not (an insert without a bucket, an update of the embedding or its model
-- that leaves the bucket as it was) the trigger files it.
CREATE FUNCTION memories_embedding_bucket() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.embedding IS NULL OR NEW.embedding_model IS NULL THEN
        NEW.embedding_bucket := NULL;
    ELSIF (TG_OP = 'INSERT' AND NEW.embedding_bucket IS NULL)
          OR (TG_OP = 'UPDATE' AND NEW.embedding_bucket IS NOT DISTINCT FROM OLD.embedding_bucket) THEN
        NEW.embedding_bucket := (SELECT c.bucket FROM embedding_centroids c WHERE c.model = NEW.embedding_model
                                  ORDER BY c.centroid <=> NEW.embedding LIMIT 1);
    END IF;
    RETURN NEW;
END
$$;
CREATE TRIGGER memories_embedding_bucket
    BEFORE INSERT OR UPDATE OF embedding, embedding_model, embedding_bucket ON memories
    FOR EACH ROW EXECUTE FUNCTION memories_embedding_bucket();

-- The agent's sketches by bucket. Its first three columns serve the whole-agent scan too, so it
-- replaces memories_agent_active_sketch (one index to keep per insert, not two).
CREATE INDEX memories_agent_bucket_sketch
    ON memories (org_id, agent_id, embedding_model, embedding_bucket) INCLUDE (id, embedding_bits)
    WHERE status = 'active' AND deleted_at IS NULL;
DROP INDEX IF EXISTS memories_agent_active_sketch;
