// mode: read
// params: graph, id
// What verify_memory needs: the memory as stored (or its tombstone), its proof and its batch. Its
// entities are those an agent gave (what was hashed): extracted MENTIONS (source 'extracted') are not.
OPTIONAL MATCH (m:Memory {graph: $graph, id: $id})
OPTIONAL MATCH (t:Tombstone {graph: $graph, id: $id})
WITH coalesce(m, t) AS node, m, t
OPTIONAL MATCH (node)-[ib:IN_BATCH]->(b:Batch)
RETURN m {.id, .graph, .text, .tags, .createdAt, .hash, .supersedes, .validFrom, .validTo, .occurredAt,
          entities: [(m)-[r:MENTIONS]->(e:Entity) WHERE coalesce(r.source, 'agent') = 'agent' | e.id]} AS memory,
       t {.*} AS tombstone, ib.proof AS proof, b {.*} AS batch
