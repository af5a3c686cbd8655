// mode: read
// params: graph, lucene, limit, terms
// Lucene's top `limit` candidates (the query is scoped to the graph's key inside Lucene), with the
// fields recall rescores them on (and `seq`, the remember order that orders equal scores), and the
// graph's own statistics for the query's analyzed `terms` (services/index/term_stats.py): Lucene's own
// scores use the statistics of every graph on the server. The statistics are the graph's counters
// plus its deltas not folded into them yet (`pending`, services/index/term_fold.py), each narrowed to the
// query's terms; a delta that a fold deletes while this reads it reads as nothing, or in part
// (recall/bm25.py GraphStats clamps what such a read adds up to). The index is
// eventually consistent (schema/memory_fulltext): the first call waits until Lucene has taken the
// updates of every commit before it, so the hits include every acknowledged memory.
CALL db.index.fulltext.awaitEventuallyConsistentIndexRefresh()
CALL () {
  CALL db.index.fulltext.queryNodes('memory_search', $lucene, {limit: $limit}) YIELD node, score
  WHERE node.graph = $graph
  WITH node, score
  ORDER BY score DESC
  LIMIT $limit
  RETURN collect({
    id: node.id, label: 'Memory', text: node.text, window: node.window, tags: node.tags, seq: node.seq,
    anchorId: [(node)-[:IN_BATCH]->(b:Batch) WHERE b.status IN ['INCLUDED', 'FINALIZED'] | b.root][0],
    degree: COUNT { (node)--() }, score: score
  }) AS rows
}
OPTIONAL MATCH (s:GraphStats {name: $graph})
RETURN rows, s {
  .textDocs, .textLength, .windowDocs, .windowLength, .tagsDocs, .tagsLength,
  terms: COLLECT {
    MATCH (t:GraphTerm {graphName: $graph})
    WHERE t.term IN $terms
    RETURN t {.term, .text, .window, .tags}
  }
} AS stats, COLLECT {
  MATCH (d:TermDelta {graphName: $graph})
  WITH d, coalesce(d.terms, []) AS terms
  RETURN d {
    .textDocs, .textLength, .windowDocs, .windowLength, .tagsDocs, .tagsLength,
    terms: [i IN range(0, size(terms) - 1) WHERE terms[i] IN $terms
      | {term: terms[i], text: d.text[i], window: d.window[i], tags: d.tags[i]}]
  }
} AS pending
