// mode: write
// params: owner, ttlMs
// One anchoring writer at a time. The write lock is taken first (SET), so the owner read next is the
// last one committed: two replicas asking at once queue here and the second sees the first's lease.
// Taking the lease from another owner bumps the fencing token, so a writer that lost its lease can no
// longer change any batch. Times are the database's clock, one for every replica.
MERGE (s:AnchorState {id: 'anchoring'})
SET s.lock = true
REMOVE s.lock
WITH s
WHERE s.owner IS NULL OR s.owner = $owner OR s.leaseUntil < timestamp()
SET s.fence = coalesce(s.fence, 0) + CASE WHEN s.owner = $owner THEN 0 ELSE 1 END,
    s.owner = $owner,
    s.leaseUntil = timestamp() + $ttlMs
RETURN s.fence AS fence
