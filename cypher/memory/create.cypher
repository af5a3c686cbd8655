// mode: write
// params: graph, memory, entities, relations, links
// A new memory is :Pending until a batch seals it (see anchor/seal). `links` are typed edges from the
// memory to entities it mentions (an event's REINFORCES, CONTRADICTS... of its contexts).
CREATE (m:Memory:Pending {graph: $graph})
SET m += $memory
WITH m
CALL (m) {
  UNWIND $entities AS ent
  MERGE (e:Entity {graph: $graph, id: ent.id})
    ON CREATE SET e.label = ent.label, e.name = ent.name
  SET e:$(ent.label)
  CREATE (m)-[:MENTIONS {id: ent.edgeId}]->(e)
}
CALL (m) {
  UNWIND $relations AS rel
  MATCH (a:Entity {graph: $graph, id: rel.from})
  USING INDEX a:Entity(graph, id)
  MATCH (b:Entity {graph: $graph, id: rel.to})
  USING INDEX b:Entity(graph, id)
  MERGE (a)-[r:$(rel.type)]->(b)
    ON CREATE SET r.id = rel.edgeId
  RETURN count(r) AS relationCount
}
CALL (m) {
  UNWIND $links AS link
  MATCH (e:Entity {graph: $graph, id: link.to})
  USING INDEX e:Entity(graph, id)
  CREATE (m)-[:$(link.type) {id: link.edgeId}]->(e)
}
RETURN m.id AS id, relationCount
