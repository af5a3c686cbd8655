// mode: read
// params: statuses
// The batches the reconcile loop (or the next anchor_now of their graph) has to finish.
MATCH (b:Batch)
WHERE b.status IN $statuses
RETURN count(b) AS unfinished
