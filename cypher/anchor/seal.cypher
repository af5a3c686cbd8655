// mode: write
// params: owner, fence, graph, root, members, now
// SEALED: the batch, its members and their proofs in one transaction, under the lease.
MATCH (s:AnchorState {id: 'anchoring'})
WHERE s.owner = $owner AND s.fence = $fence
SET s.seq = coalesce(s.seq, 0) + 1
CREATE (b:Batch {graph: $graph, id: $root, root: $root, seq: s.seq, count: size($members),
                 status: 'SEALED', sealedAt: $now})
WITH b
UNWIND $members AS member
MATCH (m:Memory:Pending {graph: $graph, id: member.id})
REMOVE m:Pending
CREATE (m)-[:IN_BATCH {proof: member.proof, index: member.index}]->(b)
RETURN b.seq AS seq, count(m) AS sealed
