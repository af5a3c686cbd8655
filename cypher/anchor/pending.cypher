// mode: read
// params: graph, limit
MATCH (m:Memory:Pending {graph: $graph})
RETURN m.id AS id, m.hash AS hash
ORDER BY m.id
LIMIT $limit
