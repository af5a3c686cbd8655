// mode: write
// params: graphs, keys, since, ids, span
// Opens a remember transaction over one or more graphs (`graphs` sorted, so that writers lock them in
// one order). Takes each graph's write lock (its GraphState, created for a new graph) for the rest of
// the transaction: the writers of a graph queue here, and what this returns stays true until commit
// (memory/commit). Per graph: its last position in the remember order; the `span` memories up to it
// (2 × WINDOW, services/index/windows.py; oldest first, with their windows, which the new memories extend);
// and the memories holding one of `keys` (content keys) created at or after `since` ('' for any
// time), or carrying one of `ids` (a transaction re-run after its unacknowledged commit), each with
// whether its vector and its links are written (a duplicate's receipt says so). The ORDER BY names `graph` as well so that the
// (graph, seq) index gives the order and the seek stops after `span` entries; by `seq` alone, Neo4j read
// every memory of the graph and sorted them, on every remember. The SEEK hints keep both lookups
// seeks: a scan of the whole index (every tenant's memories) is another plan Neo4j takes for them
// when its statistics say so (seen for the content keys while the test suite ran).
UNWIND $graphs AS graph
MERGE (s:GraphState {name: graph})
SET s.lock = true
REMOVE s.lock
WITH graph, coalesce(s.seq, 0) AS seq
CALL (graph, seq) {
  MATCH (p:Memory {graph: graph})
  USING INDEX SEEK p:Memory(graph, seq)
  WHERE p.seq <= seq
  WITH p ORDER BY p.graph DESC, p.seq DESC LIMIT $span
  RETURN reverse(collect({id: p.id, text: p.text, window: p.window})) AS recent
}
CALL (graph) {
  UNWIND $keys AS key
  MATCH (m:Memory {graph: graph, contentKey: key})
  USING INDEX SEEK m:Memory(graph, contentKey)
  WHERE m.createdAt >= $since OR m.id IN $ids
  RETURN collect({
    key: key, id: m.id, hash: m.hash,
    embedded: m.embeddingModel IS NOT NULL AND NOT m:Unembedded,
    extracted: m.extractedWith IS NOT NULL AND NOT m:Unextracted
  }) AS known
}
RETURN graph, seq, recent, known
