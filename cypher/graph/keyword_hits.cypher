// mode: read
// params: graph, lucene, limit
CALL db.index.fulltext.queryNodes('memory_text', $lucene) YIELD node, score
WHERE node.graph = $graph
RETURN node.id AS id, 'Memory' AS label, node.text AS text, node.tags AS tags,
       [(node)-[:IN_BATCH]->(b:Batch) WHERE b.status IN ['INCLUDED', 'FINALIZED'] | b.root][0] AS anchorId,
       COUNT { (node)--() } AS degree, score
ORDER BY score DESC
LIMIT $limit
