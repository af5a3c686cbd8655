// mode: read
// params: graph, ids
// Event fields and contexts of the given memories.
UNWIND $ids AS id
MATCH (m:Memory {graph: $graph, id: id})
USING INDEX SEEK m:Memory(graph, id)
RETURN m.id AS id, m.eventKind AS eventKind, m.source AS source, coalesce(m.timestamp, m.createdAt) AS timestamp,
       [(m)-[:MENTIONS]->(c:Context) | c.name] AS contexts
