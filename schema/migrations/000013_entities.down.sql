DROP INDEX IF EXISTS memories_entity_unfilled;
DROP INDEX IF EXISTS memories_subject_aspect;
DROP INDEX IF EXISTS memories_subject_entity;
ALTER TABLE memories DROP CONSTRAINT IF EXISTS memories_subject_entity_fk;
ALTER TABLE memories DROP COLUMN IF EXISTS subject_entity_id, DROP COLUMN IF EXISTS subject_aspect;
DROP TABLE IF EXISTS entity_relationships;
DROP TABLE IF EXISTS entity_aliases;
DROP TABLE IF EXISTS entities;
