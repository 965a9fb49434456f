-- Erasures: all of an agent's memories, or a list of memories, removed by a worker in bounded
-- batches under a lease, with a receipt that keeps ids, counts and times, never content.
CREATE TABLE memory_erasures (
    org_id           text        NOT NULL,
    id               uuid        NOT NULL DEFAULT gen_random_uuid(),
    agent_id         text,                  -- every memory of this agent ...
    memory_ids       uuid[],                -- ... or these memories
    agent_scope      text[],                -- the requesting key's agents (NULL: all of the org)
    status           text        NOT NULL DEFAULT 'queued',
    counts           jsonb       NOT NULL DEFAULT '{}'::jsonb,
    requested_by     text        NOT NULL,
    lease_token      uuid,
    lease_expires_at timestamptz,
    attempts         integer     NOT NULL DEFAULT 0,  -- deliveries that claimed it
    failures         integer     NOT NULL DEFAULT 0,  -- deliveries that ended in an unexpected error
    published_at     timestamptz,
    error            jsonb,
    created_at       timestamptz NOT NULL DEFAULT now(),
    updated_at       timestamptz NOT NULL DEFAULT now(),
    finished_at      timestamptz,
    PRIMARY KEY (org_id, id),
    UNIQUE (id),
    CONSTRAINT memory_erasures_status_check CHECK (status IN ('queued', 'running', 'succeeded', 'failed')),
    CONSTRAINT memory_erasures_one_target CHECK ((agent_id IS NULL) <> (memory_ids IS NULL)),
    CONSTRAINT memory_erasures_requested_by_shape CHECK (requested_by ~ '^(api_key|cli|system):.+$'),
    CONSTRAINT memory_erasures_finished CHECK ((status IN ('succeeded', 'failed')) = (finished_at IS NOT NULL))
);
-- One open erasure per agent: a second request answers the open one.
CREATE UNIQUE INDEX memory_erasures_one_open_per_agent
    ON memory_erasures (org_id, agent_id)
    WHERE agent_id IS NOT NULL AND status IN ('queued', 'running');
-- The sweeper's scan for erasures whose message or worker was lost.
CREATE INDEX memory_erasures_unfinished
    ON memory_erasures (lease_expires_at, published_at)
    WHERE status IN ('queued', 'running');

ALTER TABLE memory_erasures ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON memory_erasures TO ibex_tenant
    USING (org_id = current_setting('ibex.org_id', true))
    WITH CHECK (org_id = current_setting('ibex.org_id', true));
CREATE POLICY maintenance ON memory_erasures TO ibex_maint USING (true) WITH CHECK (true);
GRANT SELECT, INSERT, UPDATE ON memory_erasures TO ibex_tenant, ibex_maint;

-- An erased agent's review decisions go with its memories (their notes are text about them).
GRANT DELETE ON memory_review_decisions TO ibex_tenant;
CREATE INDEX memory_review_decisions_agent ON memory_review_decisions (org_id, agent_id);

-- An agent's memories of every status, and its jobs, found by agent (the erasure's batches);
-- escalations by their candidate (removing a memory finds the escalations naming it).
CREATE INDEX memories_agent ON memories (org_id, agent_id);
CREATE INDEX memory_write_jobs_agent ON memory_write_jobs (org_id, agent_id);
CREATE INDEX memory_conflict_escalations_candidate ON memory_conflict_escalations (org_id, candidate_id);

-- An erasure deletes an agent's labels together with its memories, in one transaction: the
-- primary-category projection of a memory about to be deleted is skipped (it would re-read
-- the labels and rewrite the row once per label). Only a transaction that says so skips it.
CREATE OR REPLACE FUNCTION ibex_project_primary_category() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'DELETE' AND coalesce(current_setting('ibex.erasing_agent', true), 'off') = 'on' THEN
        RETURN NULL;
    END IF;
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
