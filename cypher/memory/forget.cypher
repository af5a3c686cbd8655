// mode: write
// params: graph, id
// Deletes the memory and its edges, then any entity it mentioned that is left with no edge at all.
MATCH (m:Memory {graph: $graph, id: $id})
WITH m, [(m)-[:MENTIONS]->(e:Entity) | e] AS mentioned
DETACH DELETE m
WITH mentioned
CALL (mentioned) {
  UNWIND mentioned AS e
  WITH e WHERE NOT EXISTS { (e)--() }
  DELETE e
  RETURN count(*) AS orphans
}
RETURN orphans
