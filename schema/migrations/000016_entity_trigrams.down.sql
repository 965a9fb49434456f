DROP TRIGGER IF EXISTS entities_trigrams_fill ON entities;
DROP FUNCTION IF EXISTS entity_trigrams_fill();
DROP TABLE IF EXISTS entity_trigrams;
CREATE INDEX IF NOT EXISTS entities_trigrams ON entities USING gin (key_trigrams);
