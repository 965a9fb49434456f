-- IBEX memory write path: initial schema.
-- Every tenant table carries org_id; every unique index and cross-row foreign key
-- includes it. Statuses are CHECK constraints. Row-level security keyed on the
-- transaction's org (setting ibex.org_id) is the second wall behind application scoping.

CREATE EXTENSION IF NOT EXISTS vector;

-- Roles the application switches to per transaction (SET LOCAL ROLE / set_config('role')).
-- ibex_tenant: subject to RLS, sees only rows of current_setting('ibex.org_id').
-- ibex_maint: cross-tenant maintenance (job claims, sweeper, escalation poller, key lookup).
DO $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'ibex_tenant') THEN
        CREATE ROLE ibex_tenant NOLOGIN;
    END IF;
    IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'ibex_maint') THEN
        CREATE ROLE ibex_maint NOLOGIN;
    END IF;
END
$$;

CREATE TABLE memories (
    org_id            text        NOT NULL,
    id                uuid        NOT NULL DEFAULT gen_random_uuid(),
    agent_id          text        NOT NULL,
    content           text        NOT NULL,            -- redacted content only
    content_hash      char(64)    NOT NULL,
    source            text        NOT NULL,
    status            text        NOT NULL DEFAULT 'active',
    valid_from        timestamptz,
    valid_until       timestamptz,
    subject_key       text,                             -- derived from redacted text
    embedding         vector(384),
    -- Sign bits of the embedding: a 48-byte sketch the near-dup search ranks by Hamming
    -- distance from a covering index before re-ranking the best few exactly.
    embedding_bits    bit(384) GENERATED ALWAYS AS (binary_quantize(embedding)::bit(384)) STORED,
    embedding_model   text,
    category          text,                             -- projected by trigger from memory_labels
    confidence        double precision,                 -- projected by trigger from memory_labels
    pii_report        jsonb       NOT NULL DEFAULT '{}'::jsonb,
    metadata          jsonb       NOT NULL DEFAULT '{}'::jsonb,
    retrieval_count   bigint      NOT NULL DEFAULT 0,
    last_retrieved_at timestamptz,
    created_by_job    uuid,
    created_at        timestamptz NOT NULL DEFAULT now(),
    updated_at        timestamptz NOT NULL DEFAULT now(),
    deleted_at        timestamptz,
    PRIMARY KEY (org_id, id),
    UNIQUE (id),
    CONSTRAINT memories_status_check
        CHECK (status IN ('active', 'quarantined', 'superseded', 'merged_into', 'deleted')),
    CONSTRAINT memories_validity_check
        CHECK (valid_until IS NULL OR valid_from IS NULL OR valid_until > valid_from),
    CONSTRAINT memories_content_hash_hex CHECK (content_hash ~ '^[0-9a-f]{64}$'),
    CONSTRAINT memories_confidence_range CHECK (confidence IS NULL OR (confidence >= 0 AND confidence <= 1))
);

-- One live copy per (org, agent, content): the race-free exact-dedup authority (ADR-0055 option 3).
CREATE UNIQUE INDEX memories_content_hash_unique_active
    ON memories (org_id, agent_id, content_hash)
    WHERE status = 'active' AND deleted_at IS NULL;

-- Per-agent near-dup search: an index-only scan over the agent's active rows reads ids and
-- sign-bit sketches (no heap access), so its cost barely grows with the agent's corpus.
CREATE INDEX memories_agent_active_sketch
    ON memories (org_id, agent_id) INCLUDE (id, embedding_bits)
    WHERE status = 'active' AND deleted_at IS NULL;

CREATE INDEX memories_embedding_hnsw
    ON memories USING hnsw (embedding vector_cosine_ops);

CREATE TABLE memory_labels (
    org_id     text             NOT NULL,
    memory_id  uuid             NOT NULL,
    label      text             NOT NULL,
    confidence double precision NOT NULL,
    created_at timestamptz      NOT NULL DEFAULT now(),
    PRIMARY KEY (org_id, memory_id, label),
    FOREIGN KEY (org_id, memory_id) REFERENCES memories (org_id, id) ON DELETE CASCADE,
    CONSTRAINT memory_labels_confidence_range CHECK (confidence >= 0 AND confidence <= 1),
    CONSTRAINT memory_labels_label_not_blank CHECK (length(btrim(label)) > 0)
);

-- The primary category is a projection owned by the database: the label with the highest
-- confidence (ties broken by label text). Application code never writes memories.category;
-- the guard trigger below refuses it.
CREATE FUNCTION ibex_project_category_of(target_org text, target_id uuid) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
    top_label text;
    top_conf  double precision;
BEGIN
    SELECT l.label, l.confidence INTO top_label, top_conf
      FROM memory_labels l
     WHERE l.org_id = target_org AND l.memory_id = target_id
     ORDER BY l.confidence DESC, l.label ASC
     LIMIT 1;
    PERFORM set_config('ibex.label_projection', 'on', true);
    UPDATE memories
       SET category = top_label, confidence = top_conf, updated_at = now()
     WHERE org_id = target_org AND id = target_id
       AND (category IS DISTINCT FROM top_label OR confidence IS DISTINCT FROM top_conf);
    PERFORM set_config('ibex.label_projection', 'off', true);
END
$$;

CREATE FUNCTION ibex_project_primary_category() RETURNS trigger
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

CREATE TRIGGER memory_labels_project_category
    AFTER INSERT OR UPDATE OR DELETE ON memory_labels
    FOR EACH ROW EXECUTE FUNCTION ibex_project_primary_category();

CREATE FUNCTION ibex_guard_category() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF coalesce(current_setting('ibex.label_projection', true), 'off') <> 'on' THEN
        IF TG_OP = 'INSERT' AND (NEW.category IS NOT NULL OR NEW.confidence IS NOT NULL) THEN
            RAISE EXCEPTION 'memories.category and confidence are projected from memory_labels'
                USING ERRCODE = 'check_violation';
        END IF;
        IF TG_OP = 'UPDATE' AND (NEW.category IS DISTINCT FROM OLD.category
                                 OR NEW.confidence IS DISTINCT FROM OLD.confidence) THEN
            RAISE EXCEPTION 'memories.category and confidence are projected from memory_labels'
                USING ERRCODE = 'check_violation';
        END IF;
    END IF;
    RETURN NEW;
END
$$;

CREATE TRIGGER memories_guard_category
    BEFORE INSERT OR UPDATE ON memories
    FOR EACH ROW EXECUTE FUNCTION ibex_guard_category();

CREATE TABLE memory_relationships (
    org_id            text        NOT NULL,
    id                uuid        NOT NULL DEFAULT gen_random_uuid(),
    source_memory_id  uuid        NOT NULL,
    target_memory_id  uuid        NOT NULL,
    relationship_type text        NOT NULL,
    evidence          jsonb       NOT NULL DEFAULT '{}'::jsonb,
    decided_by        text        NOT NULL,
    created_at        timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (org_id, id),
    FOREIGN KEY (org_id, source_memory_id) REFERENCES memories (org_id, id) ON DELETE CASCADE,
    FOREIGN KEY (org_id, target_memory_id) REFERENCES memories (org_id, id) ON DELETE CASCADE,
    CONSTRAINT memory_relationships_type_check
        CHECK (relationship_type IN ('near_duplicate_of', 'supersedes', 'contradicts')),
    CONSTRAINT memory_relationships_no_self_link CHECK (source_memory_id <> target_memory_id),
    CONSTRAINT memory_relationships_unique_pair
        UNIQUE (org_id, source_memory_id, target_memory_id, relationship_type)
);
CREATE INDEX memory_relationships_target ON memory_relationships (org_id, target_memory_id);

CREATE TABLE memory_write_jobs (
    org_id           text        NOT NULL,
    id               uuid        NOT NULL DEFAULT gen_random_uuid(),
    agent_id         text        NOT NULL,
    status           text        NOT NULL DEFAULT 'queued',
    stage            text        NOT NULL DEFAULT 'validate',
    raw_content      text,                  -- unredacted; erased once the PII stage has run
    request          jsonb       NOT NULL,  -- everything but the content
    context          jsonb       NOT NULL DEFAULT '{}'::jsonb,  -- stage outputs (ids, numbers, redacted text)
    embedding        vector(384),
    idempotency_key  text,
    lease_token      uuid,
    lease_expires_at timestamptz,
    attempts         integer     NOT NULL DEFAULT 0,
    published_at     timestamptz,
    published_queue  text,                  -- the queue its current stage was published to
    memory_id        uuid,
    outcome          text,
    result           jsonb,
    error            jsonb,
    decisions        jsonb       NOT NULL DEFAULT '[]'::jsonb,
    timings_ms       jsonb       NOT NULL DEFAULT '{}'::jsonb,
    created_at       timestamptz NOT NULL DEFAULT now(),
    updated_at       timestamptz NOT NULL DEFAULT now(),
    finished_at      timestamptz,
    PRIMARY KEY (org_id, id),
    UNIQUE (id),
    CONSTRAINT memory_write_jobs_status_check
        CHECK (status IN ('queued', 'running', 'succeeded', 'failed')),
    CONSTRAINT memory_write_jobs_stage_check
        CHECK (stage IN ('validate', 'pii', 'exact_dedup', 'embed', 'near_dedup', 'conflict',
                         'labels', 'persist', 'done')),
    CONSTRAINT memory_write_jobs_outcome_check
        CHECK (outcome IS NULL OR outcome IN ('created', 'exact_duplicate')),
    CONSTRAINT memory_write_jobs_raw_erased_when_finished
        CHECK (status IN ('queued', 'running') OR raw_content IS NULL)
);
-- The sweeper's scan: unfinished jobs by lease expiry / publish time.
CREATE INDEX memory_write_jobs_unfinished
    ON memory_write_jobs (lease_expires_at, published_at)
    WHERE status IN ('queued', 'running');
-- Micro-batching: a stage delivery also takes jobs waiting for the same stage on its queue.
CREATE INDEX memory_write_jobs_waiting
    ON memory_write_jobs (stage, published_queue, updated_at)
    WHERE status IN ('queued', 'running');

CREATE TABLE memory_idempotency_keys (
    org_id           text        NOT NULL,
    agent_id         text        NOT NULL,
    key              text        NOT NULL,
    fingerprint      char(64)    NOT NULL,
    job_id           uuid        NOT NULL,
    state            text        NOT NULL DEFAULT 'in_progress',
    response_status  integer,
    response_body    jsonb,
    lease_expires_at timestamptz NOT NULL,
    created_at       timestamptz NOT NULL DEFAULT now(),
    updated_at       timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (org_id, agent_id, key),
    FOREIGN KEY (org_id, job_id) REFERENCES memory_write_jobs (org_id, id),
    CONSTRAINT memory_idempotency_keys_state_check CHECK (state IN ('in_progress', 'completed')),
    CONSTRAINT memory_idempotency_keys_key_shape CHECK (key ~ '^[\x21-\x7e]{1,255}$'),
    CONSTRAINT memory_idempotency_keys_final_has_response
        CHECK (state <> 'completed' OR (response_status IS NOT NULL AND response_body IS NOT NULL))
);

CREATE TABLE memory_conflict_escalations (
    org_id           text        NOT NULL,
    id               uuid        NOT NULL DEFAULT gen_random_uuid(),
    agent_id         text        NOT NULL,
    memory_id        uuid        NOT NULL,   -- the newly written memory
    candidate_id     uuid        NOT NULL,   -- the existing memory it may conflict with
    reason           text        NOT NULL,
    evidence         jsonb       NOT NULL DEFAULT '{}'::jsonb,
    status           text        NOT NULL DEFAULT 'pending',
    outcome          text,
    decided_by       text,
    decision_reason  text,
    decided_at       timestamptz,
    lease_token      uuid,
    lease_expires_at timestamptz,
    attempts         integer     NOT NULL DEFAULT 0,
    next_attempt_at  timestamptz NOT NULL DEFAULT now(),
    last_error       text,
    created_by_job   uuid,
    created_at       timestamptz NOT NULL DEFAULT now(),
    updated_at       timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (org_id, id),
    UNIQUE (id),
    FOREIGN KEY (org_id, memory_id) REFERENCES memories (org_id, id) ON DELETE CASCADE,
    FOREIGN KEY (org_id, candidate_id) REFERENCES memories (org_id, id) ON DELETE CASCADE,
    CONSTRAINT memory_conflict_escalations_status_check
        CHECK (status IN ('pending', 'claimed', 'needs_review', 'resolved', 'dead')),
    CONSTRAINT memory_conflict_escalations_outcome_check
        CHECK (outcome IS NULL OR outcome IN ('supersedes', 'contradicts', 'compatible', 'needs_review')),
    CONSTRAINT memory_conflict_escalations_reason_check
        CHECK (reason IN ('overlapping_intervals', 'missing_valid_from')),
    CONSTRAINT memory_conflict_escalations_distinct CHECK (memory_id <> candidate_id),
    CONSTRAINT memory_conflict_escalations_unique_pair UNIQUE (org_id, memory_id, candidate_id)
);
CREATE INDEX memory_conflict_escalations_pollable
    ON memory_conflict_escalations (next_attempt_at)
    WHERE status IN ('pending', 'claimed');

CREATE TABLE api_keys (
    org_id       text        NOT NULL,
    id           uuid        NOT NULL DEFAULT gen_random_uuid(),
    key_hash     char(64)    NOT NULL UNIQUE,
    prefix       text        NOT NULL,
    agents       text[],                      -- NULL: every agent of the org
    description  text,
    created_at   timestamptz NOT NULL DEFAULT now(),
    revoked_at   timestamptz,
    PRIMARY KEY (org_id, id),
    UNIQUE (id)
);

-- Row-level security: tenant role sees its org only; maintenance role sees all.
DO $$
DECLARE
    t text;
BEGIN
    FOREACH t IN ARRAY ARRAY['memories', 'memory_labels', 'memory_relationships', 'memory_write_jobs',
                             'memory_idempotency_keys', 'memory_conflict_escalations', 'api_keys']
    LOOP
        EXECUTE format('ALTER TABLE %I ENABLE ROW LEVEL SECURITY', t);
        EXECUTE format('CREATE POLICY tenant_isolation ON %I TO ibex_tenant '
                       'USING (org_id = current_setting(''ibex.org_id'', true)) '
                       'WITH CHECK (org_id = current_setting(''ibex.org_id'', true))', t);
        EXECUTE format('CREATE POLICY maintenance ON %I TO ibex_maint USING (true) WITH CHECK (true)', t);
        EXECUTE format('GRANT SELECT, INSERT, UPDATE, DELETE ON %I TO ibex_tenant, ibex_maint', t);
    END LOOP;
END
$$;

-- Per-agent corpus version: persist locks this row to serialise near-dup and conflict
-- decisions per (org, agent), and bumps it whenever the agent's active corpus changes, so
-- a decision computed earlier is known to be current or is recomputed under the lock.
CREATE TABLE memory_agent_corpus (
    org_id     text        NOT NULL,
    agent_id   text        NOT NULL,
    version    bigint      NOT NULL DEFAULT 0,
    updated_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (org_id, agent_id)
);
ALTER TABLE memory_agent_corpus ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON memory_agent_corpus TO ibex_tenant
    USING (org_id = current_setting('ibex.org_id', true))
    WITH CHECK (org_id = current_setting('ibex.org_id', true));
CREATE POLICY maintenance ON memory_agent_corpus TO ibex_maint USING (true) WITH CHECK (true);
GRANT SELECT, INSERT, UPDATE, DELETE ON memory_agent_corpus TO ibex_tenant, ibex_maint;
