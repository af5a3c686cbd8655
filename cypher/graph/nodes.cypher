// mode: read
// params: graph, memoryIds, entityIds
CALL () {
  UNWIND $memoryIds AS id
  MATCH (n:Memory {graph: $graph, id: id})
  RETURN n
  UNION
  UNWIND $entityIds AS id
  MATCH (n:Entity {graph: $graph, id: id})
  RETURN n
}
RETURN n.id AS id, coalesce(n.label, 'Memory') AS label, coalesce(n.text, n.name) AS text, n.tags AS tags,
       n.anchorId AS anchorId, COUNT { (n)--() } AS degree
