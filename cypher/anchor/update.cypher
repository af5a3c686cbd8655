// mode: write
// params: owner, fence, root, changes, anchorId
// One state transition of a batch, under the lease; on inclusion its memories get their anchorId.
MATCH (s:AnchorState {id: 'anchoring'})
WHERE s.owner = $owner AND s.fence = $fence
MATCH (b:Batch {root: $root})
SET b += $changes
WITH b
CALL (b) {
  MATCH (m:Memory)-[:IN_BATCH]->(b)
  WHERE $anchorId IS NOT NULL
  SET m.anchorId = $anchorId
}
RETURN b {.*} AS batch
