// mode: schema
// params:
CREATE INDEX entity_graph_name IF NOT EXISTS FOR (e:Entity) ON (e.graph, e.name)
