// mode: read
// params: graph, keys
UNWIND $keys AS key
MATCH (m:Memory {graph: $graph, contentKey: key})
RETURN key, m.id AS id, m.hash AS hash
