// mode: write
// params: states, memories, windows, stats, terms
// Writes what a remember transaction decided (services/memory.py), for one or more graphs whose locks
// memory/begin took: each graph's new last position (`states`: graph, seq); the new memories
// (`memories`: graph, `memory` properties, `entities` (id, label, name, edgeId), `relations` (from,
// type, to, edgeId), `links` (type, to, edgeId: typed edges to mentioned entities, e.g. an event's
// REINFORCES) and `supersedes` (to, edgeId: memories of the graph this one replaces)); the windows
// of earlier memories they extend (`windows`: graph, id, window); and what that changed in each
// graph's term statistics (`stats`: graph and, per field, the change in memories that have it and in
// its total length; `terms`: graph, term and its counts, sorted: writers lock counters in one order;
// a counter back at zero everywhere is deleted). Entities come first and relations last, so an item
// may relate entities that another item introduces. A new memory is :Pending until a batch seals it
// (see anchor/seal). Forget and the upgrade use the same statement for windows and statistics.
CALL () {
  UNWIND $states AS state
  MATCH (s:GraphState {name: state.graph})
  SET s.seq = state.seq
}
CALL () {
  UNWIND $memories AS item
  UNWIND item.entities AS ent
  MERGE (e:Entity {graph: item.graph, id: ent.id})
    ON CREATE SET e.label = ent.label, e.name = ent.name
  SET e:$(ent.label)
}
CALL () {
  UNWIND $memories AS item
  CREATE (m:Memory:Pending {graph: item.graph})
  SET m += item.memory
  WITH m, item
  CALL (m, item) {
    UNWIND item.entities AS ent
    MATCH (e:Entity {graph: item.graph, id: ent.id})
    USING INDEX e:Entity(graph, id)
    CREATE (m)-[:MENTIONS {id: ent.edgeId}]->(e)
  }
  CALL (m, item) {
    UNWIND item.supersedes AS old
    MATCH (p:Memory {graph: item.graph, id: old.to})
    USING INDEX p:Memory(graph, id)
    CREATE (m)-[:SUPERSEDES {id: old.edgeId}]->(p)
  }
  CALL (m, item) {
    UNWIND item.links AS link
    MATCH (e:Entity {graph: item.graph, id: link.to})
    USING INDEX e:Entity(graph, id)
    CREATE (m)-[:$(link.type) {id: link.edgeId}]->(e)
  }
}
CALL () {
  UNWIND $memories AS item
  UNWIND item.relations AS rel
  MATCH (a:Entity {graph: item.graph, id: rel.from})
  USING INDEX a:Entity(graph, id)
  MATCH (b:Entity {graph: item.graph, id: rel.to})
  USING INDEX b:Entity(graph, id)
  MERGE (a)-[r:$(rel.type)]->(b)
    ON CREATE SET r.id = rel.edgeId
}
CALL () {
  UNWIND $windows AS w
  MATCH (m:Memory {graph: w.graph, id: w.id})
  SET m.window = w.window
}
CALL () {
  UNWIND $stats AS st
  MERGE (s:GraphStats {name: st.graph})
  SET s.textDocs = coalesce(s.textDocs, 0) + st.textDocs,
      s.textLength = coalesce(s.textLength, 0) + st.textLength,
      s.windowDocs = coalesce(s.windowDocs, 0) + st.windowDocs,
      s.windowLength = coalesce(s.windowLength, 0) + st.windowLength,
      s.tagsDocs = coalesce(s.tagsDocs, 0) + st.tagsDocs,
      s.tagsLength = coalesce(s.tagsLength, 0) + st.tagsLength
}
CALL () {
  UNWIND $terms AS row
  MERGE (t:GraphTerm {graphName: row.graph, term: row.term})
  SET t.text = coalesce(t.text, 0) + row.text,
      t.window = coalesce(t.window, 0) + row.window,
      t.tags = coalesce(t.tags, 0) + row.tags
  WITH t
  WHERE t.text = 0 AND t.window = 0 AND t.tags = 0
  DELETE t
}
