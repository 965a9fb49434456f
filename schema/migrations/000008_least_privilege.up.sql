-- Least privilege: the API, workers, sweeper and poller log in as ibex_app, which owns nothing,
-- inherits nothing and can only switch (per transaction) to ibex_tenant or ibex_maint; the
-- owner is used by migrations alone. Row-level security is forced, so it holds for a table's
-- owner too (a superuser still bypasses it).
DO $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'ibex_app') THEN
        CREATE ROLE ibex_app LOGIN NOINHERIT;
    END IF;
END
$$;
GRANT ibex_tenant, ibex_maint TO ibex_app;
GRANT SELECT ON schema_migrations TO ibex_app;  -- readiness: are the migrations current

DO $$
DECLARE
    t text;
BEGIN
    FOR t IN SELECT c.relname FROM pg_class c
              WHERE c.relnamespace = 'public'::regnamespace AND c.relkind = 'r' AND c.relrowsecurity
    LOOP
        EXECUTE format('ALTER TABLE %I FORCE ROW LEVEL SECURITY', t);
    END LOOP;
END
$$;
