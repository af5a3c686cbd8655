// mode: read
// params: graph, ids
// Event fields and contexts of the given memories (the contexts the event named, not an extracted
// mention that met a context's name).
UNWIND $ids AS id
MATCH (m:Memory {graph: $graph, id: id})
USING INDEX SEEK m:Memory(graph, id)
RETURN m.id AS id, m.eventKind AS eventKind, m.source AS source, coalesce(m.timestamp, m.createdAt) AS timestamp,
       [(m)-[r:MENTIONS]->(c:Context) WHERE coalesce(r.source, 'agent') = 'agent' | c.name] AS contexts
