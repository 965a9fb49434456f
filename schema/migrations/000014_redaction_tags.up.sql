-- The keyed tag of each redacted value of a memory's content, in order (ibex_worker.redaction_tags:
-- "TYPE:KEY:<64-bit HMAC>[:s]", never the value), so the conflict rules can tell whether two
-- placeholders hide one value. Pseudonymous personal data: cleared with the content, never returned by the
-- API. NULL for rows stored before this column or without IBEX_PII_TAG_KEY.
ALTER TABLE memories ADD COLUMN redaction_tags text[];
