// mode: read
// params: graph, vector, fetch, limit
// The graph's `limit` memories nearest to `vector`, from the index's `fetch` nearest of every graph
// (fewer than `limit` when other graphs crowd them out: services/embeddings.py then asks
// embed/nearest_exact.cypher). Rows shaped as graph/keyword_hits' rows, for the walk.
CALL db.index.vector.queryNodes('memory_embedding', $fetch, $vector) YIELD node, score
WHERE node.graph = $graph
WITH node, score
ORDER BY score DESC
LIMIT $limit
RETURN node.id AS id, 'Memory' AS label, node.text AS text, node.tags AS tags,
  [(node)-[:IN_BATCH]->(b:Batch) WHERE b.status IN ['INCLUDED', 'FINALIZED'] | b.root][0] AS anchorId,
  COUNT { (node)--() } AS degree
