// mode: schema
// params:
CREATE CONSTRAINT memory_graph_id IF NOT EXISTS FOR (m:Memory) REQUIRE (m.graph, m.id) IS UNIQUE
