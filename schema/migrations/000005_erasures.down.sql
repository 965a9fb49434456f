CREATE OR REPLACE FUNCTION ibex_project_primary_category() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP IN ('UPDATE', 'DELETE') THEN
        PERFORM ibex_project_category_of(OLD.org_id, OLD.memory_id);
    END IF;
    IF TG_OP IN ('INSERT', 'UPDATE')
       AND (TG_OP = 'INSERT' OR (NEW.org_id, NEW.memory_id) IS DISTINCT FROM (OLD.org_id, OLD.memory_id)
            OR NEW.label IS DISTINCT FROM OLD.label OR NEW.confidence IS DISTINCT FROM OLD.confidence) THEN
        PERFORM ibex_project_category_of(NEW.org_id, NEW.memory_id);
    END IF;
    RETURN NULL;
END
$$;
DROP INDEX IF EXISTS memory_conflict_escalations_candidate;
DROP INDEX IF EXISTS memory_write_jobs_agent;
DROP INDEX IF EXISTS memories_agent;
DROP INDEX IF EXISTS memory_review_decisions_agent;
REVOKE DELETE ON memory_review_decisions FROM ibex_tenant;
DROP TABLE IF EXISTS memory_erasures;
