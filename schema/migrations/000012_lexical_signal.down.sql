DROP INDEX IF EXISTS memories_lexical_unfilled;
DROP INDEX IF EXISTS memories_lexical_fingerprint;
DROP INDEX IF EXISTS memories_lexical_bands;
ALTER TABLE memories DROP COLUMN IF EXISTS lexical_bands, DROP COLUMN IF EXISTS lexical_fingerprint;
