// mode: read
// params: statuses
MATCH (b:Batch)
WHERE b.status IN $statuses
RETURN b {.*} AS batch
ORDER BY b.seq
