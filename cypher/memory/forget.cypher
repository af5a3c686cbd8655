// mode: write
// params: graph, id, now
// Deletes the memory and its edges, then any entity it mentioned that is left with no edge at all.
// Returns its position in the remember order, so the caller can rebuild its neighbours' windows, and
// what the fulltext index held of it, for the graph's term statistics (memory/commit). Takes the
// graph's write lock first, as remembers do (memory/begin): the neighbours stay as read until commit.
// An anchored memory leaves a tombstone (id, hash, position, proof, batch) so verify_memory can explain,
// :Pending until its forget record (domain/manifest.py) is a leaf of the graph's next batch (anchor/seal);
// the position of one forgotten before it was anchored joins its GraphState's `forgottenSeqs`, so an
// export accounts for every position of the remember order (graphsvc audit).
OPTIONAL MATCH (s:GraphState {name: $graph})
CALL (s) {
  WITH s WHERE s IS NOT NULL
  SET s.lock = true
  REMOVE s.lock
}
MATCH (m:Memory {graph: $graph, id: $id})
OPTIONAL MATCH (m)-[ib:IN_BATCH]->(b:Batch)
CALL (m, ib, b) {
  WITH * WHERE b IS NOT NULL
  CREATE (t:Tombstone:Pending {graph: m.graph, id: m.id, hash: m.hash, seq: m.seq, forgottenAt: $now})
  CREATE (t)-[:IN_BATCH {proof: ib.proof, index: ib.index}]->(b)
}
CALL (s, m, b) {
  WITH * WHERE b IS NULL AND s IS NOT NULL AND m.seq IS NOT NULL
  SET s.forgottenSeqs = coalesce(s.forgottenSeqs, []) + m.seq
}
WITH m, m.seq AS seq, m.text AS text, m.window AS window, m.tags AS tags,
     [(m)-[:MENTIONS]->(e:Entity) | e] AS mentioned
DETACH DELETE m
WITH seq, text, window, tags, mentioned
CALL (mentioned) {
  UNWIND mentioned AS e
  WITH e WHERE NOT EXISTS { (e)--() }
  DELETE e
  RETURN count(*) AS orphans
}
RETURN orphans, seq, text, window, tags
