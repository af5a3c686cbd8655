// mode: write
// params: limit
// Up to `limit` memories that have no embedding and do not wait for one (remembered while embeddings
// were off, or by an older version) join the backlog; run until it marks none.
MATCH (m:Memory)
WHERE m.embedding IS NULL AND NOT m:Unembedded
WITH m LIMIT $limit
SET m:Unembedded
RETURN count(m) AS marked
