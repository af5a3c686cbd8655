// mode: write
// params: limit, extractor
// Up to `limit` memories that do not wait for extraction but were not read by `extractor` (none yet:
// remembered while extraction was off, or by an older version; or by another extractor or version)
// join the backlog, with when they joined it (`extractQueuedAt`); run until it marks none. A memory
// `extractor` could not read (extract/set_aside) stays aside: another extractor or version tries again.
MATCH (m:Memory)
WHERE (m.extractedWith IS NULL OR m.extractedWith <> $extractor) AND NOT m:Unextracted
  AND coalesce(m.extractSetAsideBy, '') <> $extractor
WITH m LIMIT $limit
SET m:Unextracted, m.extractQueuedAt = timestamp()
RETURN count(m) AS marked
