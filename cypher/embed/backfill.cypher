// mode: write
// params: limit, model
// Up to `limit` memories that do not wait for an embedding but have none, or one that another model
// made (`embeddingModel` names the model file by its sha256 prefix; none: an older version's), join
// the backlog; run until it marks none.
MATCH (m:Memory)
WHERE (m.embedding IS NULL OR m.embeddingModel IS NULL OR m.embeddingModel <> $model) AND NOT m:Unembedded
WITH m LIMIT $limit
SET m:Unembedded
RETURN count(m) AS marked
