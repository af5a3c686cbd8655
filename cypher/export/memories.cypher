// mode: read
// params: graph, after, limit, carried
// A page of the graph's memories in remember order (keyset: positions after `after`), each with what
// its envelope is made of, its batch and packed proof, its edges (with where each came from), and the
// properties an export carries (`carried`: who wrote it, what store_event recorded; never a derived one).
// The envelope's entities are those an agent gave: extracted MENTIONS (source 'extracted',
// services/extraction.py) are not hashed, but derived again by an audit from the memory's text with the
// extractor that read it (`extractedWith`): of a memory waiting to be read again (:Unextracted) neither
// is exported, as its edges may be of entities since met under another name.
MATCH (m:Memory {graph: $graph})
USING INDEX SEEK m:Memory(graph, seq)
WHERE m.seq > $after
WITH m
ORDER BY m.graph, m.seq
LIMIT $limit
OPTIONAL MATCH (m)-[ib:IN_BATCH]->(b:Batch)
RETURN m {.id, .graph, .text, .tags, .createdAt, .hash, .seq, .supersedes, .validFrom, .validTo, .occurredAt,
          entities: [(m)-[r:MENTIONS]->(e:Entity) WHERE coalesce(r.source, 'agent') = 'agent' | e.id]} AS memory,
       b.root AS batch, b.status AS status, ib.proof AS proof,
       [(m)-[r]->(x) WHERE NOT x:Batch AND NOT (m:Unextracted AND r.source = 'extracted')
                    | {rel: type(r), to: x.id, id: r.id, source: r.source, extractor: r.extractor,
                       writerToken: r.writerToken}] AS edges,
       [k IN keys(m) WHERE k IN $carried | [k, m[k]]] AS props,
       CASE WHEN m:Unextracted THEN null ELSE m.extractedWith END AS extractedWith
