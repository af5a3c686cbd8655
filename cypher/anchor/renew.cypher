// mode: write
// params: owner, fence, ttlMs
// Extends a lease still held (same owner and fence) while its holder works.
MATCH (s:AnchorState {id: 'anchoring'})
WHERE s.owner = $owner AND s.fence = $fence
SET s.leaseUntil = timestamp() + $ttlMs
RETURN s.fence AS fence
