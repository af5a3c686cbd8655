// mode: write
// params: nodes, token, by
// Memories of a claimed batch that the extractor `by` (name/version) cannot read (no text, or a text it
// raises on) leave the backlog, marked :Unextractable with the extractor that could not read them, so
// that no worker claims them again; a backfill (extract/backfill) gives them to another extractor or
// version. `nodes`: their element ids, as extract/claim returned them.
UNWIND $nodes AS node
MATCH (m:Memory:Unextracted)
WHERE elementId(m) = node AND m.extractClaim = $token
SET m:Unextractable, m.extractSetAsideBy = $by
REMOVE m:Unextracted, m.extractClaim, m.extractClaimUntil, m.extractFirst, m.extractQueuedAt
RETURN count(m) AS setAside
