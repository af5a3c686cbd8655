// mode: write
// params: graph, totals, terms
// Adds what a write changed to the graph's term statistics (services/term_stats.py: `tally`). Setting
// the GraphStats node first takes its lock, so the writers of one graph queue here and then lock the
// term counters in one (sorted) order. A counter back at zero everywhere is deleted.
MERGE (s:GraphStats {name: $graph})
SET s.textDocs = coalesce(s.textDocs, 0) + $totals.textDocs,
    s.textLength = coalesce(s.textLength, 0) + $totals.textLength,
    s.windowDocs = coalesce(s.windowDocs, 0) + $totals.windowDocs,
    s.windowLength = coalesce(s.windowLength, 0) + $totals.windowLength,
    s.tagsDocs = coalesce(s.tagsDocs, 0) + $totals.tagsDocs,
    s.tagsLength = coalesce(s.tagsLength, 0) + $totals.tagsLength
WITH s
CALL (s) {
  UNWIND $terms AS row
  MERGE (t:GraphTerm {graphName: $graph, term: row.term})
  SET t.text = coalesce(t.text, 0) + row.text,
      t.window = coalesce(t.window, 0) + row.window,
      t.tags = coalesce(t.tags, 0) + row.tags
  WITH t
  WHERE t.text = 0 AND t.window = 0 AND t.tags = 0
  DELETE t
}
