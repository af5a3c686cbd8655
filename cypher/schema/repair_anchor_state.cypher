// mode: write
// params:
// Before the constraint: merge the AnchorState nodes that an older version could create twice,
// keeping the highest batch sequence and a fence above every one held (any lease is dropped).
MATCH (s:AnchorState {id: 'anchoring'})
WITH collect(s) AS states
WHERE size(states) > 1
WITH head(states) AS keep, tail(states) AS extra,
     reduce(top = 0, x IN states | CASE WHEN coalesce(x.seq, 0) > top THEN coalesce(x.seq, 0) ELSE top END) AS seq,
     reduce(top = 0, x IN states | CASE WHEN coalesce(x.fence, 0) > top THEN coalesce(x.fence, 0) ELSE top END) AS fence
SET keep.seq = seq, keep.fence = fence + 1, keep.owner = null, keep.leaseUntil = 0
FOREACH (x IN extra | DETACH DELETE x)
RETURN size(extra) AS removed
