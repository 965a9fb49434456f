DROP INDEX IF EXISTS memories_agent_searchable_since;
ALTER TABLE memories DROP COLUMN IF EXISTS searchable_since;
