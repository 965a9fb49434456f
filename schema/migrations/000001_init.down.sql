DROP TABLE IF EXISTS memory_agent_corpus;
DROP TABLE IF EXISTS api_keys;
DROP TABLE IF EXISTS memory_conflict_escalations;
DROP TABLE IF EXISTS memory_idempotency_keys;
DROP TABLE IF EXISTS memory_write_jobs;
DROP TABLE IF EXISTS memory_relationships;
DROP TABLE IF EXISTS memory_labels;
DROP TABLE IF EXISTS memories;
DROP FUNCTION IF EXISTS ibex_guard_category();
DROP FUNCTION IF EXISTS ibex_project_primary_category();
DROP FUNCTION IF EXISTS ibex_project_category_of(text, uuid);
-- Roles are cluster-wide and may be shared by other databases; drop them only when unused.
DO $$
BEGIN
    IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'ibex_tenant') THEN
        BEGIN
            DROP ROLE ibex_tenant;
        EXCEPTION WHEN dependent_objects_still_exist THEN
            NULL;  -- still granted in another database of the cluster
        END;
    END IF;
    IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'ibex_maint') THEN
        BEGIN
            DROP ROLE ibex_maint;
        EXCEPTION WHEN dependent_objects_still_exist THEN
            NULL;
        END;
    END IF;
END
$$;
