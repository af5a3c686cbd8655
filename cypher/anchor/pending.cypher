// mode: read
// params: graph, limit
// What the graph's next batch seals, in one row of lists (far cheaper for the driver than a row per
// memory): its pending memories (ids, hashes, positions), the tombstones whose forget records wait
// (domain/manifest.py), whether a batch of the graph already carries a manifest, and, for the graph's
// first one, the tombstones made before forget records (no record, none waiting). A graph being
// imported (exports/importer.py) waits, memories and forgets alike: an import that fails is taken back,
// and a batch must not bind what it removes, nor follow the file's roots on chain.
CALL () {
  OPTIONAL MATCH (s:GraphState {name: $graph})
  RETURN s.importing IS NOT NULL AS importing
}
CALL (importing) {
  OPTIONAL MATCH (m:Memory:Pending {graph: $graph})
  WHERE NOT importing
  WITH m
  ORDER BY m.id
  LIMIT $limit
  RETURN collect(m.id) AS ids, collect(m.hash) AS hashes, collect(m.seq) AS seqs
}
CALL (importing) {
  OPTIONAL MATCH (t:Tombstone:Pending {graph: $graph})
  WHERE NOT importing
  WITH t
  ORDER BY t.id
  LIMIT $limit
  RETURN collect(t {.id, .hash, .forgottenAt}) AS forgets
}
CALL () {
  RETURN EXISTS { MATCH (b:Batch {graph: $graph}) WHERE b.manifestProof IS NOT NULL } AS manifested
}
CALL () {
  OPTIONAL MATCH (t:Tombstone {graph: $graph})
  WHERE NOT t:Pending AND NOT EXISTS { (t)-[:RECORDED_IN]->(:Batch) }
  RETURN collect(t.id) AS before
}
RETURN ids, hashes, seqs, forgets, manifested, before
