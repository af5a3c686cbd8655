// mode: schema
// params:
// One node per graph (named by it, not in it): the sizes recall's BM25 needs (services/index/term_stats.py).
CREATE CONSTRAINT graph_stats_graph IF NOT EXISTS FOR (s:GraphStats) REQUIRE s.name IS UNIQUE
