// mode: write
// params: graph, rows
// A page of an export's tombstones (`rows`: id, hash, seq, forgottenAt, batch root, packed proof, and
// where its forget record was anchored: `recordedIn` root and packed `recordProof`, null for one made
// before forget records).
UNWIND $rows AS row
MERGE (t:Tombstone {graph: $graph, id: row.id})
SET t.hash = row.hash, t.seq = row.seq, t.forgottenAt = row.forgottenAt
WITH t, row
MATCH (b:Batch {root: row.batch, graph: $graph})
MERGE (t)-[ib:IN_BATCH]->(b)
SET ib.proof = row.proof
WITH t, row
OPTIONAL CALL (t, row) {
  MATCH (r:Batch {root: row.recordedIn, graph: $graph})
  MERGE (t)-[rec:RECORDED_IN]->(r)
  SET rec.proof = row.recordProof
  RETURN r
}
RETURN count(t) AS written
