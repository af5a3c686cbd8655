// mode: write
// params: limit, lease_ms, token
// Claims up to `limit` memories of the backlog for one worker for `lease_ms`: those nobody holds, or
// whose holder's lease ran out (a worker that died). Setting `embedLock` first takes each memory's
// write lock, and the claim is read again under it, so two workers racing for a memory never both
// claim it: the second sees the first's claim once the first commits.
MATCH (m:Unembedded)
WHERE coalesce(m.embedClaimUntil, 0) < timestamp()
WITH m LIMIT $limit
SET m.embedLock = true
WITH m
WHERE coalesce(m.embedClaimUntil, 0) < timestamp()
SET m.embedClaimUntil = timestamp() + $lease_ms, m.embedClaim = $token
REMOVE m.embedLock
RETURN m.graph AS graph, m.id AS id, m.text AS text
