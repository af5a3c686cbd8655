// mode: write
// params: after, graphs, limit, lease_ms, token
// Claims up to `limit` memories of the extraction backlog for one worker for `lease_ms`, fairly across
// graphs, as embed/claim does: first the memories a write could not read in time (`extractFirst`,
// oldest first), then round-robin over the graphs named after `after` (at most `graphs` GraphState names,
// each giving up to `limit` memories, found by an index seek: schema/unextracted_graph); only memories;
// those nobody holds or whose holder's lease ran out, read again under each memory's write lock
// (`extractLock`), so two workers never claim the same memory. Returns one row: the memories claimed
// (`node`: to set one aside, extract/set_aside; `queued`: when a backfill put it in the backlog;
// `again`: read before, by another extractor or when an agent named an entity it mentions); `next`,
// where the next claim resumes ('': the first graph again); and `more`: whether any memory is left to
// claim.
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
    MATCH (m:Unextracted)
    WHERE m.extractFirst = true AND m:Memory AND coalesce(m.extractClaimUntil, 0) < timestamp()
    WITH m
    ORDER BY m.createdAt
    LIMIT $limit
    RETURN m
  UNION
    UNWIND names AS name
    CALL (name) {
      MATCH (m:Unextracted {graph: name})
      WHERE m:Memory AND coalesce(m.extractClaimUntil, 0) < timestamp()
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
  SET m.extractLock = true
  WITH m
  WHERE coalesce(m.extractClaimUntil, 0) < timestamp()
  SET m.extractClaimUntil = timestamp() + $lease_ms, m.extractClaim = $token
  REMOVE m.extractLock
  RETURN collect({
    graph: m.graph, id: m.id, text: m.text, node: elementId(m), createdAt: m.createdAt,
    queued: m.extractQueuedAt, again: m.extractedWith IS NOT NULL
  }) AS claimed
}
WITH names, picked, claimed, [p IN picked WHERE NOT coalesce(p.extractFirst = true, false) | p.graph] AS served
RETURN claimed,
  EXISTS { MATCH (w:Unextracted) WHERE w:Memory AND coalesce(w.extractClaimUntil, 0) < timestamp() } AS more,
  CASE
    WHEN size(picked) >= $limit THEN coalesce(last(served), $after)
    WHEN size(names) < $graphs THEN ''
    ELSE last(names)
  END AS next
