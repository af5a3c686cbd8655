// mode: write
// params: owner, fence, root, changes
// One state transition of a batch, under the lease.
MATCH (s:AnchorState {id: 'anchoring'})
WHERE s.owner = $owner AND s.fence = $fence
MATCH (b:Batch {root: $root})
SET b += $changes
RETURN b {.*} AS batch
