// mode: write
// params: token, rows, model
// The vectors of a claimed batch, each with the model that made it; a memory forgotten meanwhile, or
// claimed again by another worker after this one's lease ran out, is left alone.
UNWIND $rows AS row
MATCH (m:Memory:Unembedded {graph: row.graph, id: row.id})
WHERE m.embedClaim = $token
CALL db.create.setNodeVectorProperty(m, 'embedding', row.vector)
SET m.embeddingModel = $model
REMOVE m:Unembedded, m.embedClaim, m.embedClaimUntil
RETURN count(m) AS stored
