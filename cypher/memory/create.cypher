// mode: write
// params: graph, memories
// Creates a batch of memories in one statement. Each item: `memory` (properties), `entities`
// (id, label, name, edgeId), `relations` (from, type, to, edgeId) and `links` (type, to, edgeId:
// typed edges to mentioned entities, e.g. an event's REINFORCES) and `supersedes` (to, edgeId: the
// memories of the graph this one replaces). Entities come first and relations
// last, so an item may relate entities that another item of the batch introduces. A new memory is
// :Pending until a batch seals it (see anchor/seal).
CALL () {
  UNWIND $memories AS item
  UNWIND item.entities AS ent
  MERGE (e:Entity {graph: $graph, id: ent.id})
    ON CREATE SET e.label = ent.label, e.name = ent.name
  SET e:$(ent.label)
}
CALL () {
  UNWIND $memories AS item
  CREATE (m:Memory:Pending {graph: $graph})
  SET m += item.memory
  WITH m, item
  CALL (m, item) {
    UNWIND item.entities AS ent
    MATCH (e:Entity {graph: $graph, id: ent.id})
    USING INDEX e:Entity(graph, id)
    CREATE (m)-[:MENTIONS {id: ent.edgeId}]->(e)
  }
  CALL (m, item) {
    UNWIND item.supersedes AS old
    MATCH (p:Memory {graph: $graph, id: old.to})
    USING INDEX p:Memory(graph, id)
    CREATE (m)-[:SUPERSEDES {id: old.edgeId}]->(p)
  }
  CALL (m, item) {
    UNWIND item.links AS link
    MATCH (e:Entity {graph: $graph, id: link.to})
    USING INDEX e:Entity(graph, id)
    CREATE (m)-[:$(link.type) {id: link.edgeId}]->(e)
  }
}
CALL () {
  UNWIND $memories AS item
  UNWIND item.relations AS rel
  MATCH (a:Entity {graph: $graph, id: rel.from})
  USING INDEX a:Entity(graph, id)
  MATCH (b:Entity {graph: $graph, id: rel.to})
  USING INDEX b:Entity(graph, id)
  MERGE (a)-[r:$(rel.type)]->(b)
    ON CREATE SET r.id = rel.edgeId
}
