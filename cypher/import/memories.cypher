// mode: write
// params: graph, rows
// A page of an export's memories (`rows`: id, `memory` properties built from an allow-list
// (exports/rows.py), `pending`, `batch` root and packed `proof`, `edges`: rel, to, id, props),
// merged by id so a resumed import writes nothing twice. The graph is set last, from the header, whatever
// a row holds. A memory of no batch waits (:Pending) for this server's next anchor. The memories come
// first and their edges last, so an edge may go to a memory of the same page: to an entity, else to a
// memory of the graph (SUPERSEDES: an earlier one). Returns what it wrote, for the importer to count.
CALL () {
  UNWIND $rows AS row
  MERGE (m:Memory {graph: $graph, id: row.id})
  SET m += row.memory
  SET m.graph = $graph
  FOREACH (_ IN CASE WHEN row.pending THEN [1] ELSE [] END | SET m:Pending)
  RETURN count(m) AS written
}
CALL () {
  UNWIND $rows AS row
  WITH row WHERE row.batch IS NOT NULL
  MATCH (m:Memory {graph: $graph, id: row.id})
  MATCH (b:Batch {root: row.batch, graph: $graph})
  MERGE (m)-[ib:IN_BATCH]->(b)
  SET ib.proof = row.proof
  RETURN count(ib) AS linked
}
CALL () {
  UNWIND $rows AS row
  MATCH (m:Memory {graph: $graph, id: row.id})
  UNWIND row.edges AS edge
  OPTIONAL MATCH (e:Entity {graph: $graph, id: edge.to})
  OPTIONAL MATCH (p:Memory {graph: $graph, id: edge.to})
  WITH m, edge, coalesce(e, p) AS target
  WHERE target IS NOT NULL
  MERGE (m)-[r:$(edge.rel)]->(target)
  ON CREATE SET r += edge.props, r.id = edge.id
  RETURN count(r) AS edges
}
RETURN written, linked, edges
