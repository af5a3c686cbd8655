// mode: write
// params: after, graphs, limit, lease_ms, token
// Claims up to `limit` memories of the embedding backlog for one worker for `lease_ms`, fairly across
// graphs (services/embeddings.py): first the memories a write could not embed in time (`embedFirst`,
// oldest first), then round-robin over the graphs: those named after `after` (GraphState names, in
// order, at most `graphs` of them), each giving up to `limit` of its waiting memories, found by an index
// seek (schema/unembedded_graph), so one graph's 100,000 cost another's ten nothing. Only memories: a
// node of another kind that carries the label is never read. Those nobody holds, or whose holder's
// lease ran out (a worker that died). Setting `embedLock` first takes each memory's write lock, and the
// claim is read again under it, so two workers racing for a memory never both claim it: the second
// sees the first's claim once the first commits. Returns one row: the memories claimed (`node`: to set
// one aside, embed/set_aside; `queued`: when a backfill put it in the backlog, else null: it waits since
// `createdAt`); `next`, where the next claim resumes ('': the first graph again); and `more`: whether
// any memory is left to claim (a label scan that stops at the first).
CALL () {
  MATCH (s:GraphState)
  WHERE s.name > $after
  WITH s.name AS name
  ORDER BY name
  LIMIT $graphs
  RETURN collect(name) AS names
}
CALL (names) {
  CALL (names) {
    MATCH (m:Unembedded)
    WHERE m.embedFirst = true AND m:Memory AND coalesce(m.embedClaimUntil, 0) < timestamp()
    WITH m
    ORDER BY m.createdAt
    LIMIT $limit
    RETURN m
  UNION
    UNWIND names AS name
    CALL (name) {
      MATCH (m:Unembedded {graph: name})
      WHERE m:Memory AND coalesce(m.embedClaimUntil, 0) < timestamp()
      RETURN m
      LIMIT $limit
    }
    RETURN m
  }
  WITH m
  LIMIT $limit
  RETURN collect(m) AS picked
}
CALL (picked) {
  UNWIND picked AS m
  SET m.embedLock = true
  WITH m
  WHERE coalesce(m.embedClaimUntil, 0) < timestamp()
  SET m.embedClaimUntil = timestamp() + $lease_ms, m.embedClaim = $token
  REMOVE m.embedLock
  RETURN collect({
    graph: m.graph, id: m.id, text: m.text, node: elementId(m), createdAt: m.createdAt, queued: m.embedQueuedAt
  }) AS claimed
}
WITH names, picked, claimed, [p IN picked WHERE NOT coalesce(p.embedFirst = true, false) | p.graph] AS served
RETURN claimed,
  EXISTS { MATCH (w:Unembedded) WHERE w:Memory AND coalesce(w.embedClaimUntil, 0) < timestamp() } AS more,
  CASE
    WHEN size(picked) >= $limit THEN coalesce(last(served), $after)
    WHEN size(names) < $graphs THEN ''
    ELSE last(names)
  END AS next
