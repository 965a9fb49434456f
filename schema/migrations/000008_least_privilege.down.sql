DO $$
DECLARE
    t text;
BEGIN
    FOR t IN SELECT c.relname FROM pg_class c
              WHERE c.relnamespace = 'public'::regnamespace AND c.relkind = 'r' AND c.relforcerowsecurity
    LOOP
        EXECUTE format('ALTER TABLE %I NO FORCE ROW LEVEL SECURITY', t);
    END LOOP;
END
$$;
REVOKE SELECT ON schema_migrations FROM ibex_app;
-- Roles are cluster-wide and may be shared by other databases (its memberships too): drop it,
-- memberships with it, only when no other database grants it anything.
DO $$
BEGIN
    BEGIN
        DROP ROLE IF EXISTS ibex_app;
    EXCEPTION WHEN dependent_objects_still_exist THEN
        NULL;  -- still granted in another database of the cluster
    END;
END
$$;
