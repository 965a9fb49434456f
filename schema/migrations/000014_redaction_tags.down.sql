ALTER TABLE memories DROP COLUMN IF EXISTS redaction_tags;
