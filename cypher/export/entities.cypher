// mode: read
// params: graph, after, limit
// A page of the graph's entities by id (keyset: after the last id of the page before), each with its
// typed relations to other entities.
MATCH (e:Entity {graph: $graph})
USING INDEX SEEK e:Entity(graph, id)
WHERE e.id > $after
WITH e
ORDER BY e.graph, e.id
LIMIT $limit
RETURN e.id AS id, e.label AS label, e.name AS name, e.source AS source,
       [(e)-[r]->(b:Entity) | {id: r.id, rel: type(r), to: b.id, props: properties(r)}] AS relations
