// mode: read
// params: unfinished
// What /metrics shows of anchoring, across every graph, whatever their size: memories waiting for a
// batch and batches in all (label counts, from the count store), the unfinished batches per status
// (seeks of batch_status: few), and the block time (ms) of the newest finalized batch (one entry of
// batch_status_anchored, read in its order: ordering by both of its properties is what lets the
// planner read it so, rather than sort every finalized batch).
CALL () {
  MATCH (p:Pending)
  RETURN count(p) AS pending
}
CALL () {
  MATCH (b:Batch)
  RETURN count(b) AS batches
}
CALL () {
  UNWIND $unfinished AS status
  RETURN collect(COUNT { (:Batch {status: status}) }) AS counts
}
CALL () {
  MATCH (b:Batch)
  WHERE b.status = 'FINALIZED' AND b.anchoredAt IS NOT NULL
  WITH b
  ORDER BY b.status DESC, b.anchoredAt DESC
  LIMIT 1
  RETURN collect(b.anchoredAt) AS newest
}
RETURN pending, batches, counts, newest[0] AS lastFinalized
