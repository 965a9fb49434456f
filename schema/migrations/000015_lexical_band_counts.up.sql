-- How many of an agent's active memories carry each lexical band (issue 17). On an agent of
-- templated text a band cut from the template is shared by thousands of rows and tells a
-- near duplicate from a sibling of the same template nothing; the lexical candidates
-- (ibex_worker.store.lexical) look up the rows of the rarer bands only, so their cost is
-- bounded by the band count cut instead of following the agent's corpus. A band already
-- carries its org, agent and position, so the key is (org_id, band). Kept in step by a
-- trigger on memories (insert, delete, a change of status, deleted_at or lexical_bands),
-- under the agent's corpus lock like every change to its active memories. Only a hint: a
-- band with no row reads as rare (its rows are looked up), so a missing or low count costs
-- time, never a candidate.
-- The rows carrying a band are found through one expression index per band position: its
-- `=` on a bigint is leakproof, so the index serves the tenant role under row-level
-- security, where the GIN index's `&&` cannot (the planner reads the whole table instead).
-- The GIN index on the whole array served only `&&`, which the tenant role cannot use: gone,
-- one index less to keep up on every insert.
DROP INDEX IF EXISTS memories_lexical_bands;
CREATE INDEX memories_lexical_band_1 ON memories ((lexical_bands[1])) WHERE status = 'active' AND deleted_at IS NULL;
CREATE INDEX memories_lexical_band_2 ON memories ((lexical_bands[2])) WHERE status = 'active' AND deleted_at IS NULL;
CREATE INDEX memories_lexical_band_3 ON memories ((lexical_bands[3])) WHERE status = 'active' AND deleted_at IS NULL;
CREATE INDEX memories_lexical_band_4 ON memories ((lexical_bands[4])) WHERE status = 'active' AND deleted_at IS NULL;
CREATE INDEX memories_lexical_band_5 ON memories ((lexical_bands[5])) WHERE status = 'active' AND deleted_at IS NULL;
CREATE INDEX memories_lexical_band_6 ON memories ((lexical_bands[6])) WHERE status = 'active' AND deleted_at IS NULL;
CREATE INDEX memories_lexical_band_7 ON memories ((lexical_bands[7])) WHERE status = 'active' AND deleted_at IS NULL;
CREATE INDEX memories_lexical_band_8 ON memories ((lexical_bands[8])) WHERE status = 'active' AND deleted_at IS NULL;
CREATE INDEX memories_lexical_band_9 ON memories ((lexical_bands[9])) WHERE status = 'active' AND deleted_at IS NULL;
CREATE INDEX memories_lexical_band_10 ON memories ((lexical_bands[10])) WHERE status = 'active' AND deleted_at IS NULL;
CREATE INDEX memories_lexical_band_11 ON memories ((lexical_bands[11])) WHERE status = 'active' AND deleted_at IS NULL;
CREATE INDEX memories_lexical_band_12 ON memories ((lexical_bands[12])) WHERE status = 'active' AND deleted_at IS NULL;
CREATE INDEX memories_lexical_band_13 ON memories ((lexical_bands[13])) WHERE status = 'active' AND deleted_at IS NULL;
CREATE INDEX memories_lexical_band_14 ON memories ((lexical_bands[14])) WHERE status = 'active' AND deleted_at IS NULL;
CREATE INDEX memories_lexical_band_15 ON memories ((lexical_bands[15])) WHERE status = 'active' AND deleted_at IS NULL;
CREATE INDEX memories_lexical_band_16 ON memories ((lexical_bands[16])) WHERE status = 'active' AND deleted_at IS NULL;

CREATE TABLE memory_lexical_band_counts (
    org_id text    NOT NULL,
    band   bigint  NOT NULL,
    n      integer NOT NULL,
    PRIMARY KEY (org_id, band)
);
ALTER TABLE memory_lexical_band_counts ENABLE ROW LEVEL SECURITY;
ALTER TABLE memory_lexical_band_counts FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON memory_lexical_band_counts TO ibex_tenant
    USING (org_id = current_setting('ibex.org_id', true))
    WITH CHECK (org_id = current_setting('ibex.org_id', true));
CREATE POLICY maintenance ON memory_lexical_band_counts TO ibex_maint USING (true) WITH CHECK (true);
GRANT SELECT, INSERT, UPDATE, DELETE ON memory_lexical_band_counts TO ibex_tenant, ibex_maint;

CREATE FUNCTION memory_lexical_band_counts_sync() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    was boolean := TG_OP <> 'INSERT' AND coalesce(OLD.status = 'active' AND OLD.deleted_at IS NULL
                                                  AND OLD.lexical_bands IS NOT NULL, false);
    is_ boolean := TG_OP <> 'DELETE' AND coalesce(NEW.status = 'active' AND NEW.deleted_at IS NULL
                                                  AND NEW.lexical_bands IS NOT NULL, false);
BEGIN
    IF was AND is_ AND OLD.lexical_bands = NEW.lexical_bands THEN
        RETURN NULL;
    END IF;
    -- Bands in ascending order, so two transactions lock shared count rows in one order.
    IF was THEN
        UPDATE memory_lexical_band_counts c SET n = c.n - 1
          FROM (SELECT DISTINCT b FROM unnest(OLD.lexical_bands) AS b ORDER BY b) x
         WHERE c.org_id = OLD.org_id AND c.band = x.b;
        DELETE FROM memory_lexical_band_counts WHERE org_id = OLD.org_id AND band = ANY(OLD.lexical_bands) AND n <= 0;
    END IF;
    IF is_ THEN
        INSERT INTO memory_lexical_band_counts (org_id, band, n)
        SELECT NEW.org_id, b, 1 FROM (SELECT DISTINCT b FROM unnest(NEW.lexical_bands) AS b) x ORDER BY b
        ON CONFLICT (org_id, band) DO UPDATE SET n = memory_lexical_band_counts.n + 1;
    END IF;
    RETURN NULL;
END
$$;

CREATE TRIGGER memories_lexical_band_counts
    AFTER INSERT OR DELETE OR UPDATE OF status, deleted_at, lexical_bands ON memories
    FOR EACH ROW EXECUTE FUNCTION memory_lexical_band_counts_sync();

INSERT INTO memory_lexical_band_counts (org_id, band, n)
SELECT org_id, b, count(*) FROM memories, unnest(lexical_bands) AS b
 WHERE status = 'active' AND deleted_at IS NULL AND lexical_bands IS NOT NULL
 GROUP BY org_id, b;
