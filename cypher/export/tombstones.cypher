// mode: read
// params: graph, after, limit
// A page of the graph's tombstones by id (keyset), with their batch and packed proof, and where their
// forget record was anchored (none for a tombstone made before forget records).
MATCH (t:Tombstone {graph: $graph})
USING INDEX SEEK t:Tombstone(graph, id)
WHERE t.id > $after
WITH t
ORDER BY t.graph, t.id
LIMIT $limit
OPTIONAL MATCH (t)-[ib:IN_BATCH]->(b:Batch)
OPTIONAL MATCH (t)-[rec:RECORDED_IN]->(r:Batch)
RETURN t {.id, .hash, .seq, .forgottenAt} AS tombstone, b.root AS batch, ib.proof AS proof,
       r.root AS recordedIn, rec.proof AS recordProof
