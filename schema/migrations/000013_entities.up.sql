-- Entity resolution (ibex_worker.entities): what a memory is about, per org. A memory's
-- subject (the subject words of its subject key, never a redacted value) resolves to an
-- entity by its key, then by a recorded alias; otherwise it is a new entity, and every
-- entity whose key reads alike is recorded as `possibly_same_as` with its evidence. Nothing
-- merges two entities. Names come from redacted text or from a person, after the same PII
-- analysis as a memory's fields; no raw value is stored.
CREATE TABLE entities (
    org_id       text        NOT NULL,
    id           uuid        NOT NULL DEFAULT gen_random_uuid(),
    name         text        NOT NULL,                 -- canonical; never rewritten
    key          text        NOT NULL,                 -- ibex_worker.entity_keys.key(name)
    kind         text        NOT NULL DEFAULT 'subject',
    key_trigrams text[]      NOT NULL DEFAULT '{}',    -- proposes fuzzy candidates
    created_by   text        NOT NULL,
    created_at   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (org_id, id),
    CONSTRAINT entities_key_unique UNIQUE (org_id, key),
    CONSTRAINT entities_kind_shape CHECK (kind ~ '^[a-z][a-z0-9_]{0,31}$'),
    CONSTRAINT entities_created_by_shape CHECK (created_by ~ '^(api_key|cli|system):.+$')
);
CREATE INDEX entities_trigrams ON entities USING gin (key_trigrams);
CREATE INDEX entities_by_created ON entities (org_id, created_at, id);

-- Another spelling of an entity, given by a person or taken by the pipeline. An alias key
-- names one entity of the org, and never another entity's own key.
CREATE TABLE entity_aliases (
    org_id     text        NOT NULL,
    entity_id  uuid        NOT NULL,
    alias      text        NOT NULL,
    key        text        NOT NULL,
    created_by text        NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (org_id, key),
    FOREIGN KEY (org_id, entity_id) REFERENCES entities (org_id, id) ON DELETE CASCADE,
    CONSTRAINT entity_aliases_created_by_shape CHECK (created_by ~ '^(api_key|cli|system):.+$')
);
CREATE INDEX entity_aliases_of ON entity_aliases (org_id, entity_id, created_at);

-- A resemblance between two entities, never a merge: the newer entity points at the older.
CREATE TABLE entity_relationships (
    org_id            text        NOT NULL,
    source_entity_id  uuid        NOT NULL,
    target_entity_id  uuid        NOT NULL,
    relationship_type text        NOT NULL DEFAULT 'possibly_same_as',
    evidence          jsonb       NOT NULL DEFAULT '{}'::jsonb,
    decided_by        text        NOT NULL,
    created_at        timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (org_id, source_entity_id, target_entity_id, relationship_type),
    FOREIGN KEY (org_id, source_entity_id) REFERENCES entities (org_id, id) ON DELETE CASCADE,
    FOREIGN KEY (org_id, target_entity_id) REFERENCES entities (org_id, id) ON DELETE CASCADE,
    CONSTRAINT entity_relationships_type_check CHECK (relationship_type = 'possibly_same_as'),
    CONSTRAINT entity_relationships_not_self CHECK (source_entity_id <> target_entity_id)
);
CREATE INDEX entity_relationships_targets ON entity_relationships (org_id, target_entity_id);

-- The entity a memory's subject resolved to (NULL: no subject, a redacted subject, stored
-- before this column until `ibex backfill` fills it, or the entity was deleted), and the
-- fact's aspect (its "for" phrase, from the redacted parse): dated facts about one entity in
-- one aspect are compared for conflicts even when they are not near duplicates.
ALTER TABLE memories ADD COLUMN subject_entity_id uuid, ADD COLUMN subject_aspect text;
ALTER TABLE memories ADD CONSTRAINT memories_subject_entity_fk FOREIGN KEY (org_id, subject_entity_id)
    REFERENCES entities (org_id, id) ON DELETE SET NULL (subject_entity_id);
CREATE INDEX memories_subject_entity ON memories (org_id, subject_entity_id) WHERE subject_entity_id IS NOT NULL;
CREATE INDEX memories_subject_aspect ON memories (org_id, agent_id, subject_entity_id, subject_aspect)
    WHERE status = 'active' AND deleted_at IS NULL AND subject_aspect IS NOT NULL AND valid_from IS NOT NULL;
CREATE INDEX memories_entity_unfilled ON memories (org_id, id)
    WHERE subject_entity_id IS NULL AND subject_key IS NOT NULL AND deleted_at IS NULL AND status <> 'quarantined'
      AND split_part(subject_key, '|', 1) <> '' AND strpos(split_part(subject_key, '|', 1), '[') = 0;

DO $$
DECLARE
    t text;
BEGIN
    FOREACH t IN ARRAY ARRAY['entities', 'entity_aliases', 'entity_relationships']
    LOOP
        EXECUTE format('ALTER TABLE %I ENABLE ROW LEVEL SECURITY', t);
        EXECUTE format('ALTER TABLE %I FORCE ROW LEVEL SECURITY', t);
        EXECUTE format('CREATE POLICY tenant_isolation ON %I TO ibex_tenant '
                       'USING (org_id = current_setting(''ibex.org_id'', true)) '
                       'WITH CHECK (org_id = current_setting(''ibex.org_id'', true))', t);
    END LOOP;
END
$$;
-- The write path and the routes only; relationships go with their entities (cascades run as
-- the owner), and no maintenance process reads these tables.
GRANT SELECT, INSERT, DELETE ON entities, entity_aliases TO ibex_tenant;
GRANT SELECT, INSERT ON entity_relationships TO ibex_tenant;
