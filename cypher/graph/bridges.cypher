// mode: read
// params: graph, ids, named, links, token, maxDegree
// Recall's second pass (services/recall/bridges.py): from the first pass's best memories (`ids`), the
// entities they mention that the query does not name (`named`: entity ids) and that at least one other
// and at most `maxDegree` memories mention (a hub is not followed), each with its degree and the other
// memories that mention it; and how many memories the graph has had (its last remember position).
// Edges as `links` keeps them, degrees counted over the same edges (graph/neighbours).
CALL () {
  OPTIONAL MATCH (s:GraphState {name: $graph})
  RETURN coalesce(s.seq, 0) AS size
}
CALL () {
  UNWIND $ids AS id
  MATCH (m:Memory {graph: $graph, id: id})
  USING INDEX SEEK m:Memory(graph, id)
  MATCH (m)-[r:MENTIONS]->(e:Entity)
  WHERE NOT e.id IN $named
    AND ($links = 'all' OR (coalesce(r.source, 'agent') = 'agent'
         AND ($links = 'agent' OR coalesce(r.writerToken, '') = coalesce($token, ''))))
  WITH m, e,
       CASE WHEN $links = 'all' THEN COUNT { (e)<-[:MENTIONS]-(:Memory) }
       ELSE COUNT { (e)<-[x:MENTIONS]-(:Memory) WHERE coalesce(x.source, 'agent') = 'agent'
                    AND ($links = 'agent' OR coalesce(x.writerToken, '') = coalesce($token, '')) } END AS degree
  WHERE 2 <= degree <= $maxDegree
  CALL (m, e) {
    MATCH (e)<-[y:MENTIONS]-(other:Memory)
    WHERE other <> m
      AND ($links = 'all' OR (coalesce(y.source, 'agent') = 'agent'
           AND ($links = 'agent' OR coalesce(y.writerToken, '') = coalesce($token, ''))))
    RETURN collect(other.id) AS others
  }
  RETURN collect({from: m.id, entity: e.id, degree: degree, others: others}) AS rows
}
RETURN size, rows
