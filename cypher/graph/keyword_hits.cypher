// mode: read
// params: graph, lucene, limit
// Lucene collects only the top `limit` (the query is scoped to the graph's key inside Lucene).
CALL db.index.fulltext.queryNodes('memory_search', $lucene, {limit: $limit}) YIELD node, score
WHERE node.graph = $graph
WITH node, score
ORDER BY score DESC
LIMIT $limit
RETURN collect({
  id: node.id, label: 'Memory', text: node.text, tags: node.tags,
  anchorId: [(node)-[:IN_BATCH]->(b:Batch) WHERE b.status IN ['INCLUDED', 'FINALIZED'] | b.root][0],
  degree: COUNT { (node)--() }, score: score
}) AS rows
