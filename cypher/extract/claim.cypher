// mode: write
// params: limit, lease_ms, token
// Claims up to `limit` memories of the extraction backlog for one worker for `lease_ms`, as
// embed/claim does: those nobody holds or whose holder's lease ran out, read again under each
// memory's write lock (`extractLock`), so two workers never claim the same memory.
MATCH (m:Unextracted)
WHERE coalesce(m.extractClaimUntil, 0) < timestamp()
WITH m LIMIT $limit
SET m.extractLock = true
WITH m
WHERE coalesce(m.extractClaimUntil, 0) < timestamp()
SET m.extractClaimUntil = timestamp() + $lease_ms, m.extractClaim = $token
REMOVE m.extractLock
RETURN m.graph AS graph, m.id AS id, m.text AS text
