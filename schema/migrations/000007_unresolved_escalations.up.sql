-- /metrics counts unresolved escalations by status at every scrape: an index over the
-- unresolved ones only, so the count does not grow with the resolved history.
CREATE INDEX memory_conflict_escalations_unresolved
    ON memory_conflict_escalations (status)
    WHERE status IN ('pending', 'claimed', 'needs_review', 'dead');
