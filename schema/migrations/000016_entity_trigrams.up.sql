-- An entity key's trigrams as rows (issue 17): the resemblance query
-- (ibex_worker.store.entities.alike) looks up the entities sharing the key's rarest trigrams
-- by this table's primary key. Its `=` on text is leakproof, so the index serves the tenant
-- role under row-level security, where the GIN index's `&&` on entities.key_trigrams cannot
-- (the planner read every entity of the org and intersected each one's trigrams: 35 ms at
-- 10,000 entities, 185 ms at 50,000). `size` is the key's count of trigrams: a key too short
-- or too long to resemble the name is not read. Keys are never rewritten: a trigger on insert
-- fills the rows, and they go with their entity.
CREATE TABLE entity_trigrams (
    org_id    text     NOT NULL,
    trigram   text     NOT NULL,
    size      smallint NOT NULL,
    entity_id uuid     NOT NULL,
    PRIMARY KEY (org_id, trigram, size, entity_id),
    FOREIGN KEY (org_id, entity_id) REFERENCES entities (org_id, id) ON DELETE CASCADE
);
CREATE INDEX entity_trigrams_of ON entity_trigrams (org_id, entity_id);
ALTER TABLE entity_trigrams ENABLE ROW LEVEL SECURITY;
ALTER TABLE entity_trigrams FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON entity_trigrams TO ibex_tenant
    USING (org_id = current_setting('ibex.org_id', true))
    WITH CHECK (org_id = current_setting('ibex.org_id', true));
GRANT SELECT, INSERT ON entity_trigrams TO ibex_tenant;

CREATE FUNCTION entity_trigrams_fill() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO entity_trigrams (org_id, trigram, size, entity_id)
    SELECT NEW.org_id, t, count(*) OVER (), NEW.id FROM (SELECT DISTINCT t FROM unnest(NEW.key_trigrams) AS t) d;
    RETURN NULL;
END
$$;
CREATE TRIGGER entities_trigrams_fill AFTER INSERT ON entities
    FOR EACH ROW EXECUTE FUNCTION entity_trigrams_fill();

INSERT INTO entity_trigrams (org_id, trigram, size, entity_id)
SELECT e.org_id, d.t, count(*) OVER (PARTITION BY e.org_id, e.id), e.id
  FROM entities e, LATERAL (SELECT DISTINCT t FROM unnest(e.key_trigrams) AS t) d;

DROP INDEX IF EXISTS entities_trigrams;
