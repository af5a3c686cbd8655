// mode: write
// params: graph, rows
// A page of an export's tombstones (`rows`: id, hash, seq, forgottenAt, batch root, packed proof).
UNWIND $rows AS row
MERGE (t:Tombstone {graph: $graph, id: row.id})
SET t.hash = row.hash, t.seq = row.seq, t.forgottenAt = row.forgottenAt
WITH t, row
MATCH (b:Batch {root: row.batch, graph: $graph})
MERGE (t)-[ib:IN_BATCH]->(b)
SET ib.proof = row.proof
RETURN count(t) AS written
