// mode: write
// params: graph, digest, lastSeq, graphTag, forgotten
// Starts (or resumes) the import of an export into `graph`: only an empty graph, or one whose import of
// the same file (its trailer digest) was cut short. Takes the graph's lock (its GraphState) and sets
// its last position first, so a memory remembered during the import takes a position after the
// export's, and its tag, so a batch sealed during the import follows the export's batches on chain.
MERGE (s:GraphState {name: $graph})
SET s.lock = true
REMOVE s.lock
WITH s, coalesce(s.importing = $digest, false) AS resumed
WHERE resumed
   OR (s.importing IS NULL AND coalesce(s.seq, 0) = 0
       AND NOT EXISTS { MATCH (:Memory {graph: $graph}) }
       AND NOT EXISTS { MATCH (:Tombstone {graph: $graph}) }
       AND NOT EXISTS { MATCH (:Entity {graph: $graph}) }
       AND NOT EXISTS { MATCH (:Batch {graph: $graph}) })
SET s.importing = $digest,
    s.seq = CASE WHEN coalesce(s.seq, 0) > $lastSeq THEN s.seq ELSE $lastSeq END,
    s.graphTag = $graphTag,
    s.forgottenSeqs = $forgotten
RETURN resumed
