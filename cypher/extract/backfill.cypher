// mode: write
// params: limit, extractor
// Up to `limit` memories that do not wait for extraction but were not read by `extractor` (none yet:
// remembered while extraction was off, or by an older version; or by another extractor or version)
// join the backlog; run until it marks none.
MATCH (m:Memory)
WHERE (m.extractedWith IS NULL OR m.extractedWith <> $extractor) AND NOT m:Unextracted
WITH m LIMIT $limit
SET m:Unextracted
RETURN count(m) AS marked
