// mode: schema
// params:
CREATE CONSTRAINT tombstone_graph_id IF NOT EXISTS FOR (t:Tombstone) REQUIRE (t.graph, t.id) IS UNIQUE
