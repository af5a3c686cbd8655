// mode: read
// params:
// Graphs holding memories stored before graphsvc kept term statistics per graph (see MemoryService.count_terms_again).
MATCH (m:Memory)
WITH DISTINCT m.graph AS graph
WHERE NOT EXISTS { MATCH (:GraphStats {name: graph}) } AND NOT EXISTS { MATCH (:TermDelta {graphName: graph}) }
RETURN graph
