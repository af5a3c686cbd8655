// mode: read
// params: key, vector, limit, breadth, model, graph, cap
// The `limit` memories nearest to `vector` of the graph whose graphKey is `key`, filtered inside the
// vector index (schema/memory_embedding.cypher): other graphs' memories never take their places,
// however many there are. The index is approximate: asked for its `breadth` nearest (100, more than
// `limit`), its best 20 were a graph's exact nearest 20 beside 100,000 other vectors, and the same as
// on a fresh server beside a million (bench/README.md, *Fourth pass*).
// Only vectors `model` made (the query's): after a change of model the old ones stay in the index until
// the worker replaces them, and say nothing about this query.
// Scores on Neo4j's cosine scale, (1 + cos) / 2. Rows shaped as graph/keyword_hits' rows, for the walk,
// in one row holding a list, as graph/neighbours. Beside them, `pending`: how many memories of that
// graph (`graph`) wait for their vector, counted up to `cap` (recall's `pending`), a seek on the
// backlog's own index (schema/unembedded_graph) whatever the other graphs' backlogs hold: one statement
// a recall fewer than a count of its own.
CYPHER 25
MATCH (node:Memory)
SEARCH node IN (VECTOR INDEX memory_embedding FOR $vector WHERE node.graphKey = $key LIMIT $breadth) SCORE AS score
WITH node, score
WHERE node.embeddingModel = $model
ORDER BY score DESC, node.id
LIMIT $limit
WITH collect({
  id: node.id, label: 'Memory', text: node.text, tags: node.tags,
  anchorId: [(node)-[:IN_BATCH]->(b:Batch) WHERE b.status IN ['INCLUDED', 'FINALIZED'] | b.root][0],
  degree: COUNT { (node)--() }
}) AS rows
CALL () {
  MATCH (m:Unembedded {graph: $graph})
  USING INDEX m:Unembedded(graph)
  WITH m LIMIT $cap
  RETURN count(m) AS pending
}
RETURN rows, pending
