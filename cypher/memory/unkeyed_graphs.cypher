// mode: read
// params:
// Graphs holding memories stored before keyword recall keyed memories by graph (see memory_search).
MATCH (m:Memory)
WHERE m.graphKey IS NULL
RETURN DISTINCT m.graph AS graph
