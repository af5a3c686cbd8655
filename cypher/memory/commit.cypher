// mode: write
// params: states, memories, windows, deltas
// Writes what a remember transaction decided (services/remember.py), for one or more graphs whose locks
// memory/begin took: each graph's new last position (`states`: graph, seq); the new memories
// (`memories`: graph, `memory` properties, `entities` (id, label, name, normName, edgeId), `relations` (from,
// type, to, edgeId), `links` (type, to, edgeId: typed edges to mentioned entities, e.g. an event's
// REINFORCES) and `supersedes` (to, edgeId: memories of the graph this one replaces)); the windows
// of earlier memories they extend (`windows`: graph, id, window); and what that changed in each
// graph's term statistics, as one TermDelta node per graph (`deltas`: graphName, per field the change
// in memories that have it and in its total length, and parallel lists `terms`, `text`, `window`,
// `tags`: each term's change per field), which memory/take_deltas folds into the graph's counters
// later, off this path (services/index/term_fold.py): 176 counters to lock and update for a round of 8
// memories were a third of its time. Entities come first and relations last, so an item may relate
// entities that another item introduces. A new memory is :Pending until a batch seals it (see
// anchor/seal), :Unembedded when the embeddings are on (`unembedded`) and :Unextracted when extraction
// is (`unextracted`). A memory whose mentions the write has read, or whose vector it is encoding, carries
// the write's own claim in its properties (`extractClaim`, `embedClaim`), and the write stores them next,
// in the same transaction, with the workers' statements (extract/store, embed/store; a vector late past
// the write's budget: memory/leftovers; services/at_write.py); the others wait for the workers
// (extract/claim, embed/claim), an interactive write's marked `extractFirst` (`embedFirst`) to be taken
// before bulk work.
// Entities carry their normalised name (`normName`, how extracted names meet them) and lose the mark
// of an entity that only extraction made (`source`): an agent naming it makes it the agent's. A memory
// that extraction joined to another entity of the same normalised name is read again, so that it
// joins the agent's (extract/store prefers it). Agent-given edges (MENTIONS, `links`, relations) carry
// `source: 'agent'` and the token that wrote them (`writerToken`, the memory's; absent without auth).
// Forget uses the same statement for windows and statistics.
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
  WITH item, ent, e
  CALL (e, ent) {  // written only when it changes: a write locks the entity, and a hub is in every remember
    WITH e, ent
    WHERE NOT ent.label IN labels(e) OR e.normName IS NULL OR e.normName <> ent.normName OR e.source IS NOT NULL
    SET e:$(ent.label), e.normName = ent.normName
    REMOVE e.source
  }
  WITH item, ent
  CALL (item, ent) {
    MATCH (x:Entity {graph: item.graph, normName: ent.normName})
    USING INDEX SEEK x:Entity(graph, normName)
    WHERE x.source = 'extracted' AND x.id <> ent.id
    MATCH (m:Memory)-[:MENTIONS {source: 'extracted'}]->(x)
    SET m:Unextracted
  }
}
CALL () {
  UNWIND $memories AS item
  CREATE (m:Memory:Pending {graph: item.graph})
  SET m += item.memory
  FOREACH (_ IN CASE WHEN item.unembedded THEN [1] ELSE [] END | SET m:Unembedded)
  FOREACH (_ IN CASE WHEN item.unextracted THEN [1] ELSE [] END | SET m:Unextracted)
  WITH m, item
  CALL (m, item) {
    UNWIND item.entities AS ent
    MATCH (e:Entity {graph: item.graph, id: ent.id})
    USING INDEX SEEK e:Entity(graph, id)
    CREATE (m)-[:MENTIONS {id: ent.edgeId, source: 'agent', writerToken: m.writerToken}]->(e)
  }
  CALL (m, item) {
    UNWIND item.supersedes AS old
    MATCH (p:Memory {graph: item.graph, id: old.to})
    USING INDEX SEEK p:Memory(graph, id)
    CREATE (m)-[:SUPERSEDES {id: old.edgeId}]->(p)
  }
  CALL (m, item) {
    UNWIND item.links AS link
    MATCH (e:Entity {graph: item.graph, id: link.to})
    USING INDEX SEEK e:Entity(graph, id)
    CREATE (m)-[:$(link.type) {id: link.edgeId, source: 'agent', writerToken: m.writerToken}]->(e)
  }
}
CALL () {
  UNWIND $memories AS item
  UNWIND item.relations AS rel
  MATCH (a:Entity {graph: item.graph, id: rel.from})
  USING INDEX SEEK a:Entity(graph, id)
  MATCH (b:Entity {graph: item.graph, id: rel.to})
  USING INDEX SEEK b:Entity(graph, id)
  MERGE (a)-[r:$(rel.type)]->(b)
    ON CREATE SET r.id = rel.edgeId, r.source = 'agent', r.writerToken = item.memory.writerToken
}
CALL () {
  UNWIND $windows AS w
  MATCH (m:Memory {graph: w.graph, id: w.id})
  SET m.window = w.window
}
CALL () {
  UNWIND $deltas AS delta
  CREATE (d:TermDelta)
  SET d = delta
}
