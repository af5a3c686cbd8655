// mode: read
// params: graph, keys, since, ids
// Memories of the graph with one of these contents, created at or after `since` ('' for any time),
// or carrying one of these ids (a transaction re-run after its unacknowledged commit).
UNWIND $keys AS key
MATCH (m:Memory {graph: $graph, contentKey: key})
WHERE m.createdAt >= $since OR m.id IN $ids
RETURN key, m.id AS id, m.hash AS hash
