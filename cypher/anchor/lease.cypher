// mode: write
// params: owner, now, ttlMs
// One anchoring writer at a time. Taking the lease from another owner bumps the fencing token, so a
// writer that lost its lease can no longer change any batch.
MERGE (s:AnchorState {id: 'anchoring'})
WITH s
WHERE s.owner IS NULL OR s.owner = $owner OR s.leaseUntil < $now
SET s.fence = coalesce(s.fence, 0) + CASE WHEN s.owner = $owner THEN 0 ELSE 1 END,
    s.owner = $owner,
    s.leaseUntil = $now + $ttlMs
RETURN s.fence AS fence
