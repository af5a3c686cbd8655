// mode: read
// params: graph, ids, vector, reach, model
// For each memory of `ids`: its own similarity to `vector` (null until embedded by `model`, the query's:
// after a change of model, a vector the old one made says nothing until the worker replaces it) and its
// neighbours' (the memories `model` embedded at most `reach` positions away in the graph's remember
// order: WINDOW, as its window, services/index/windows.py),
// on Neo4j's cosine scale: (1 + cos) / 2. One row holding a list, as graph/neighbours.
UNWIND $ids AS id
MATCH (m:Memory {graph: $graph, id: id})
RETURN collect({
  id: id,
  own: CASE WHEN m.embeddingModel = $model THEN vector.similarity.cosine(m.embedding, $vector) END,
  near: COLLECT {
    MATCH (n:Memory {graph: $graph})
    WHERE n.seq >= m.seq - $reach AND n.seq <= m.seq + $reach AND n.id <> id AND n.embeddingModel = $model
    RETURN vector.similarity.cosine(n.embedding, $vector)
  }
}) AS rows
