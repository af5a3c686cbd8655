// mode: read
// params: graph, memoryIds, entityIds, exclude, types, direction, rows
// One breadth-first level: the edges from the frontier to memories and entities not in `exclude`.
// Low-degree frontier nodes expand first, so a hub cannot crowd out the rest of a capped level.
CALL () {
  UNWIND $memoryIds AS id
  MATCH (n:Memory {graph: $graph, id: id})
  USING INDEX n:Memory(graph, id)
  RETURN n
  UNION
  UNWIND $entityIds AS id
  MATCH (n:Entity {graph: $graph, id: id})
  USING INDEX n:Entity(graph, id)
  RETURN n
}
WITH n, COUNT { (n)--() } AS frontierDegree
MATCH (n)-[r]-(x)
WHERE (x:Memory OR x:Entity) AND x.graph = $graph AND NOT x.id IN $exclude
  AND ($types IS NULL OR type(r) IN $types)
  AND ($direction = 'both' OR ($direction = 'out') = (startNode(r) = n))
RETURN n.id AS frontier, r.id AS edgeId, type(r) AS type, startNode(r) = n AS outgoing,
       x.id AS id, coalesce(x.label, 'Memory') AS label, coalesce(x.text, x.name) AS text, x.tags AS tags,
       
       [(x)-[:IN_BATCH]->(b:Batch) WHERE b.status IN ['INCLUDED', 'FINALIZED'] | b.root][0] AS anchorId, COUNT { (x)--() } AS degree
ORDER BY frontierDegree, n.id, degree
LIMIT $rows
