// mode: schema
// params:
// One node per graph and analyzed term (named by the graph, not in it): in how many of the graph's
// memories each field holds it.
CREATE CONSTRAINT graph_term IF NOT EXISTS FOR (t:GraphTerm) REQUIRE (t.graphName, t.term) IS UNIQUE
