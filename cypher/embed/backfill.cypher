// mode: write
// params: limit, model
// Up to `limit` memories that do not wait for an embedding but have none, or one that another model
// made (`embeddingModel` names the model file by its sha256 prefix; none: an older version's), join
// the backlog, with when they joined it (`embedQueuedAt`: what they wait since); run until it marks
// none. A memory `model` could not read (embed/set_aside) stays aside: another model tries it again.
MATCH (m:Memory)
WHERE (m.embedding IS NULL OR m.embeddingModel IS NULL OR m.embeddingModel <> $model) AND NOT m:Unembedded
  AND coalesce(m.embedSetAsideBy, '') <> $model
WITH m LIMIT $limit
SET m:Unembedded, m.embedQueuedAt = timestamp()
RETURN count(m) AS marked
