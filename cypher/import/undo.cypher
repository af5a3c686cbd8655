// mode: write
// params: graph, digest, lastSeq
// Ends an import taken back (exports/undo.py): the graph is no longer being imported, and keeps no tag
// (no batch of this server carries the file's; its next batch starts a list of its own). With no memory
// left, its state is an empty graph's again; with memories remembered during the import (positions
// after `lastSeq`), the file's positions 1..lastSeq are recorded as forgotten before this server
// anchored them, beside those of its own memories, so every position of its order stays accounted for.
MATCH (s:GraphState {name: $graph})
WHERE s.importing = $digest
WITH s, EXISTS { MATCH (:Memory {graph: $graph}) } AS kept
REMOVE s.importing, s.graphTag
SET s.seq = CASE WHEN kept THEN s.seq ELSE 0 END,
    s.forgottenSeqs = CASE
      WHEN kept THEN range(1, $lastSeq) + [p IN coalesce(s.forgottenSeqs, []) WHERE p > $lastSeq]
    END
RETURN kept
