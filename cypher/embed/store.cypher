// mode: write
// params: token, rows, model
// The vectors of a claimed batch, each with the model that made it; a memory forgotten meanwhile, or
// claimed again by another worker after this one's lease ran out, is left alone. `rows`: graph, id,
// vector. The memory leaves the backlog with every mark of it (embed/claim, embed/set_aside).
UNWIND $rows AS row
MATCH (m:Memory:Unembedded {graph: row.graph, id: row.id})
WHERE m.embedClaim = $token
CALL db.create.setNodeVectorProperty(m, 'embedding', row.vector)
SET m.embeddingModel = $model
REMOVE m:Unembedded, m:Unembeddable, m.embedClaim, m.embedClaimUntil, m.embedFirst, m.embedQueuedAt,
  m.embedSetAsideBy
RETURN count(m) AS stored
