// mode: read
// params: graph, seq
// The four memories before and the four after position `seq` (oldest first, with their windows): a
// forgotten memory's neighbours and their own neighbours, to rebuild windows.
CALL () {
  MATCH (p:Memory {graph: $graph})
  WHERE p.seq < $seq
  WITH p ORDER BY p.seq DESC LIMIT 4
  RETURN reverse(collect({id: p.id, text: p.text, window: p.window})) AS before
}
CALL () {
  MATCH (p:Memory {graph: $graph})
  WHERE p.seq > $seq
  WITH p ORDER BY p.seq ASC LIMIT 4
  RETURN collect({id: p.id, text: p.text, window: p.window}) AS after
}
RETURN before, after
