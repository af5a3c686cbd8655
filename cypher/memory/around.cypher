// mode: read
// params: graph, seq, span
// The `span` memories before and the `span` after position `seq` (2 × WINDOW, services/index/windows.py;
// oldest first, with their windows): a forgotten memory's neighbours and their own neighbours, to
// rebuild windows. Ordered by graph as well, so that the (graph, seq) index gives the order and each
// seek reads `span` entries, not the graph.
CALL () {
  MATCH (p:Memory {graph: $graph})
  USING INDEX SEEK p:Memory(graph, seq)
  WHERE p.seq < $seq
  WITH p ORDER BY p.graph DESC, p.seq DESC LIMIT $span
  RETURN reverse(collect({id: p.id, text: p.text, window: p.window})) AS before
}
CALL () {
  MATCH (p:Memory {graph: $graph})
  USING INDEX SEEK p:Memory(graph, seq)
  WHERE p.seq > $seq
  WITH p ORDER BY p.graph, p.seq LIMIT $span
  RETURN collect({id: p.id, text: p.text, window: p.window}) AS after
}
RETURN before, after
