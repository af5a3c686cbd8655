// mode: read
// params: graph, memoryIds, entityIds, exclude, types, direction, links, token, rows
// One breadth-first level: the edges from the frontier to memories and entities not in `exclude`.
// `links` says which edges count (recall's option; explore walks 'all'): 'agent' keeps the agent-given
// ones (`source: 'agent'`, or none: written before edges said where they came from), 'mine' those of
// them written with the caller's token (`token`; without one, those written without one). A node's
// degree then counts the same edges, so another writer's edges neither lead the walk nor damp it.
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
  AND ($links = 'all' OR (coalesce(r.source, 'agent') = 'agent'
       AND ($links = 'agent' OR coalesce(r.writerToken, '') = coalesce($token, ''))))
WITH n, r, x
LIMIT $rows
// Each node's degree once, however many frontier nodes reach it. Over every edge it is the node's own
// count (no edge read); over the edges `links` keeps, each edge is read, so a hub counts up to 1,000
// (1 / degree, the walk's damping, is then 0.001 at most: the same to the score's fourth decimal).
WITH x, collect({frontier: n.id, edgeId: r.id, type: type(r), outgoing: startNode(r) = n}) AS edges
WITH x, edges,
     CASE WHEN $links = 'all' THEN COUNT { (x)--() }
     ELSE COUNT { MATCH (x)-[e]-() WHERE coalesce(e.source, 'agent') = 'agent'
                  AND ($links = 'agent' OR coalesce(e.writerToken, '') = coalesce($token, ''))
                  RETURN e LIMIT 1000 } END AS degree
UNWIND edges AS edge
// One row holding a list: the Python driver decodes that several times faster than one row each.
// Only what the walk needs (an entity's name, no memory text): callers fetch the nodes they show.
RETURN collect(edge {.*, id: x.id, label: coalesce(x.label, 'Memory'), text: x.name, degree: degree}) AS rows
