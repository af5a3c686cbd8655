// mode: write
// params: graph, key
MATCH (m:Memory {graph: $graph})
WHERE m.graphKey IS NULL
SET m.graphKey = $key
