// mode: write
// params: nodes, token, by
// Memories of a claimed batch that the model `by` cannot read (no text, or a text the encoder raises on)
// leave the backlog, marked :Unembeddable with the model that could not read them, so that no worker
// claims them again; a backfill (embed/backfill) gives them to another model. `nodes`: their element
// ids, as embed/claim returned them (found even when their graph or id is not a memory's).
UNWIND $nodes AS node
MATCH (m:Memory:Unembedded)
WHERE elementId(m) = node AND m.embedClaim = $token
SET m:Unembeddable, m.embedSetAsideBy = $by
REMOVE m:Unembedded, m.embedClaim, m.embedClaimUntil, m.embedFirst, m.embedQueuedAt
RETURN count(m) AS setAside
