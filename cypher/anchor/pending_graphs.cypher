// mode: read
// params:
// Graphs with leaves waiting for a batch: memories, and tombstones whose forget records wait.
MATCH (p:Pending)
WHERE p:Memory OR p:Tombstone
RETURN p.graph AS graph, count(*) AS pending
ORDER BY graph
