// mode: write
// params: graph, tag, contract
// Chained roots: the graph's tag (`tag` the first time, then kept in its GraphState: 32 random bytes,
// never the graph's name) and the root its next batch names as prevRoot: the newest batch of the graph
// on that tag, anchored on `contract` or not signed yet (a batch of another contract is not in this
// contract's list); the zero root when there is none. Runs first in the seal's transaction, so that,
// as in a remember, the GraphState is locked before any memory.
MERGE (s:GraphState {name: $graph})
WITH s, s.graphTag IS NULL AS fresh
CALL (s, fresh) {
  WITH s WHERE fresh
  SET s.graphTag = $tag
}
WITH s
OPTIONAL MATCH (b:Batch {graph: $graph})
WHERE b.graphTag = s.graphTag AND (b.contract IS NULL OR toLower(b.contract) = toLower($contract))
WITH s, b
ORDER BY b.seq DESC
LIMIT 1
RETURN s.graphTag AS graphTag,
       coalesce(b.root, '0x0000000000000000000000000000000000000000000000000000000000000000') AS prevRoot
