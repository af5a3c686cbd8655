// mode: read
// params: graph, limit
// One row of two lists: far cheaper for the driver than one row per memory.
MATCH (m:Memory:Pending {graph: $graph})
WITH m
ORDER BY m.id
LIMIT $limit
RETURN collect(m.id) AS ids, collect(m.hash) AS hashes
