// mode: write
// params: graph, digest, batchSeq
// Ends an import: the graph is no longer being imported, and this server numbers its next batch after
// the export's (a batch's number is the server's count, carried on chain).
MATCH (s:GraphState {name: $graph})
WHERE s.importing = $digest
REMOVE s.importing
WITH s
MERGE (a:AnchorState {id: 'anchoring'})
SET a.seq = CASE WHEN coalesce(a.seq, 0) > $batchSeq THEN a.seq ELSE $batchSeq END
RETURN s.name AS graph
