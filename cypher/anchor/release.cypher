// mode: write
// params: owner
MATCH (s:AnchorState {id: 'anchoring'})
WHERE s.owner = $owner
SET s.owner = null, s.leaseUntil = 0
RETURN s.fence AS fence
