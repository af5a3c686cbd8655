// mode: read
// params: graph, limit
// The graph's memories waiting for a batch, up to `limit`, by id. The pending_graph index seeks just
// those: by the Pending label this read every graph's pending memories (133,588 of them, for a graph
// holding 10), and by Memory(graph, id) it would read every memory of the graph.
// One row of two lists: far cheaper for the driver than one row per memory.
MATCH (m:Pending {graph: $graph})
USING INDEX SEEK m:Pending(graph)
WHERE m:Memory
WITH m
ORDER BY m.id
LIMIT $limit
RETURN collect(m.id) AS ids, collect(m.hash) AS hashes
