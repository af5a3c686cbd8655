// mode: read
// params: graph, vector, limit
// The same as embed/nearest.cypher, exactly: cosine against every embedded memory of the graph.
// `id IS NOT NULL` (true of every memory) lets the (graph, id) index find the graph's memories:
// without it Neo4j scanned every tenant's.
MATCH (node:Memory {graph: $graph})
WHERE node.id IS NOT NULL AND node.embedding IS NOT NULL
WITH node, vector.similarity.cosine(node.embedding, $vector) AS score
ORDER BY score DESC
LIMIT $limit
RETURN node.id AS id, 'Memory' AS label, node.text AS text, node.tags AS tags,
  [(node)-[:IN_BATCH]->(b:Batch) WHERE b.status IN ['INCLUDED', 'FINALIZED'] | b.root][0] AS anchorId,
  COUNT { (node)--() } AS degree
