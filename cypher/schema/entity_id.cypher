// mode: schema
// params:
CREATE CONSTRAINT entity_graph_id IF NOT EXISTS FOR (e:Entity) REQUIRE (e.graph, e.id) IS UNIQUE
