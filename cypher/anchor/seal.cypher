// mode: write
// params: owner, fence, graph, root, ids, proofs, forgets, forgetProofs, count, manifestHash, manifestProof, now, graphTag, prevRoot
// SEALED: the batch, its members and their proofs (packed, 32 bytes a step) in one transaction, under
// the lease. `ids` and `proofs` are parallel lists (a member's index is its position); so are `forgets`
// (ids of the tombstones whose forget records it holds) and `forgetProofs`. `count` is every leaf: the
// memories, the forget records and the manifest (`manifestHash`, `manifestProof`; domain/manifest.py).
// `graphTag` and `prevRoot` chain the root to the graph's previous one (anchor/link).
// `title` is the short root ("0x" and 8 hex digits): Neo4j Browser captions a batch by a property,
// and its style language cannot cut one.
// The index hint keeps the plan right on a fresh database, whose empty statistics make a label scan
// look cheap (a 10,000-member seal then took a minute instead of half a second).
MATCH (s:AnchorState {id: 'anchoring'})
WHERE s.owner = $owner AND s.fence = $fence
SET s.seq = coalesce(s.seq, 0) + 1
CREATE (b:Batch {graph: $graph, root: $root, title: substring($root, 0, 10), seq: s.seq, count: $count,
                 memories: size($ids), status: 'SEALED', sealedAt: $now, graphTag: $graphTag,
                 prevRoot: $prevRoot, manifestHash: $manifestHash, manifestProof: $manifestProof})
WITH b
CALL (b) {
  UNWIND range(0, size($ids) - 1) AS i
  MATCH (m:Memory:Pending {graph: $graph, id: $ids[i]})
  USING INDEX SEEK m:Memory(graph, id)
  REMOVE m:Pending
  CREATE (m)-[:IN_BATCH {proof: $proofs[i], index: i}]->(b)
  RETURN count(m) AS sealed
}
CALL (b) {
  UNWIND range(0, size($forgets) - 1) AS i
  MATCH (t:Tombstone:Pending {graph: $graph, id: $forgets[i]})
  REMOVE t:Pending
  CREATE (t)-[:RECORDED_IN {proof: $forgetProofs[i]}]->(b)
  RETURN count(t) AS recorded
}
RETURN b.seq AS seq, sealed, recorded
