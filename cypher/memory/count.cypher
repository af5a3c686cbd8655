// mode: write
// params: stats, terms
// Adds to graphs' term statistics (services/index/term_fold.py: folded deltas, or a count from scratch):
// `stats` (graph and, per field, the change in memories that have it and in its total length) and
// `terms` (graph, term and its counts, sorted: writers lock counters in one order). A counter back at
// zero everywhere is deleted.
CALL () {
  UNWIND $stats AS st
  MERGE (s:GraphStats {name: st.graph})
  SET s.textDocs = coalesce(s.textDocs, 0) + st.textDocs,
      s.textLength = coalesce(s.textLength, 0) + st.textLength,
      s.windowDocs = coalesce(s.windowDocs, 0) + st.windowDocs,
      s.windowLength = coalesce(s.windowLength, 0) + st.windowLength,
      s.tagsDocs = coalesce(s.tagsDocs, 0) + st.tagsDocs,
      s.tagsLength = coalesce(s.tagsLength, 0) + st.tagsLength
}
CALL () {
  UNWIND $terms AS row
  MERGE (t:GraphTerm {graphName: row.graph, term: row.term})
  SET t.text = coalesce(t.text, 0) + row.text,
      t.window = coalesce(t.window, 0) + row.window,
      t.tags = coalesce(t.tags, 0) + row.tags
  WITH t
  WHERE t.text = 0 AND t.window = 0 AND t.tags = 0
  DELETE t
}
