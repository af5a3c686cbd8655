// mode: read
// params: graph, memoryIds, entityIds
CALL () {
  UNWIND $memoryIds AS id
  MATCH (n:Memory {graph: $graph, id: id})
  USING INDEX SEEK n:Memory(graph, id)
  RETURN n
  UNION
  UNWIND $entityIds AS id
  MATCH (n:Entity {graph: $graph, id: id})
  USING INDEX SEEK n:Entity(graph, id)
  RETURN n
}
RETURN n.id AS id, coalesce(n.label, 'Memory') AS label, coalesce(n.text, n.name) AS text, n.tags AS tags,
       [(n)-[:IN_BATCH]->(b:Batch) WHERE b.status IN ['INCLUDED', 'FINALIZED'] | b.root][0] AS anchorId, COUNT { (n)--() } AS degree
