// mode: read
// params: graph, memoryIds, entityIds, exclude, types, direction, rows
// One breadth-first level: the edges from the frontier to memories and entities not in `exclude`.
// The caller orders the frontier lowest degree first, and nothing here sorts: the query reads edges
// node by node in that order and stops at `rows`. So a hub is expanded last and only as far as the
// cap needs, and a level costs about `rows` edges however many memories mention a hub.
CALL () {
  UNWIND $memoryIds AS id
  MATCH (n:Memory {graph: $graph, id: id})
  USING INDEX SEEK n:Memory(graph, id)
  RETURN n
  UNION ALL
  UNWIND $entityIds AS id
  MATCH (n:Entity {graph: $graph, id: id})
  USING INDEX SEEK n:Entity(graph, id)
  RETURN n
}
MATCH (n)-[r]-(x)
// `coalesce(x.graph, '')` on purpose: a plain `x.graph = $graph` tempts the planner into an index seek
// over the whole graph joined back to n (160k db hits a level on LoCoMo instead of expanding n).
WHERE (x:Memory OR x:Entity) AND coalesce(x.graph, '') = $graph AND NOT x.id IN $exclude
  AND ($types IS NULL OR type(r) IN $types)
  AND ($direction = 'both' OR ($direction = 'out') = (startNode(r) = n))
WITH n, r, x
LIMIT $rows
// One row holding a list: the Python driver decodes that several times faster than one row each.
// Only what the walk needs (an entity's name, no memory text): callers fetch the nodes they show.
RETURN collect({
  frontier: n.id, edgeId: r.id, type: type(r), outgoing: startNode(r) = n,
  id: x.id, label: coalesce(x.label, 'Memory'), text: x.name, degree: COUNT { (x)--() }
}) AS rows
