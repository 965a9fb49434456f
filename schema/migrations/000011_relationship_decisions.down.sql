DROP TABLE IF EXISTS memory_relationship_decisions;
