// mode: write
// params: root
// INCLUDED -> FINALIZED once the chain shows the root at its finalized block. A fact read from the
// chain, not a decision, so it needs no lease; only an INCLUDED batch moves.
MATCH (b:Batch {root: $root})
WHERE b.status = 'INCLUDED'
SET b.status = 'FINALIZED'
RETURN b.status AS status
