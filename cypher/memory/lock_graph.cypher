// mode: write
// params: graph
// Takes the graph's write lock for the rest of the transaction, changing nothing: writers to one graph
// queue here, so the duplicate check that follows sees every memory committed before it (a client
// retrying while its first attempt is still in flight included). A new graph has no state to lock yet.
OPTIONAL MATCH (s:GraphState {name: $graph})
CALL (s) {
  WITH s WHERE s IS NOT NULL
  SET s.lock = true
  REMOVE s.lock
}
RETURN s IS NOT NULL AS locked
