// mode: read
// params: graph, memoryIds, entityIds, exclude, types, direction, rows
// One breadth-first level: the edges from the frontier to memories and entities not in `exclude`.
// Low-degree frontier nodes expand first, so a hub cannot crowd out the rest of a capped level; ids
// break the remaining ties, so what a capped level keeps never depends on the query plan.
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
// `coalesce(x.graph, '')` on purpose: a plain `x.graph = $graph` tempts the planner into an index seek
// over the whole graph joined back to n (160k db hits a level on LoCoMo instead of expanding n).
WHERE (x:Memory OR x:Entity) AND coalesce(x.graph, '') = $graph AND NOT x.id IN $exclude
  AND ($types IS NULL OR type(r) IN $types)
  AND ($direction = 'both' OR ($direction = 'out') = (startNode(r) = n))
WITH n, frontierDegree, r, x
ORDER BY frontierDegree, n.id, COUNT { (x)--() }, x.id
LIMIT $rows
// One row holding a list: the Python driver decodes that several times faster than one row each.
RETURN collect({
  frontier: n.id, edgeId: r.id, type: type(r), outgoing: startNode(r) = n,
  id: x.id, label: coalesce(x.label, 'Memory'), text: coalesce(x.text, x.name), tags: x.tags,
  anchorId: [(x)-[:IN_BATCH]->(b:Batch) WHERE b.status IN ['INCLUDED', 'FINALIZED'] | b.root][0],
  degree: COUNT { (x)--() }
}) AS rows
