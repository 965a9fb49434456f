-- The lexical near-duplicate signal (ibex_worker.lexical): a word-set fingerprint and the
-- MinHash bands of a memory's character trigrams, each band already scoped to its org and
-- agent. Both derive from the stored (redacted) content and are cleared with it. NULL for
-- rows stored before this column until `ibex backfill` fills them.
ALTER TABLE memories ADD COLUMN lexical_fingerprint text, ADD COLUMN lexical_bands bigint[];
CREATE INDEX memories_lexical_bands ON memories USING gin (lexical_bands)
    WHERE status = 'active' AND deleted_at IS NULL;
CREATE INDEX memories_lexical_fingerprint ON memories (org_id, agent_id, lexical_fingerprint)
    WHERE status = 'active' AND deleted_at IS NULL;
-- A backfill walks what it has not filled yet.
CREATE INDEX memories_lexical_unfilled ON memories (org_id, id)
    WHERE lexical_bands IS NULL AND deleted_at IS NULL;
