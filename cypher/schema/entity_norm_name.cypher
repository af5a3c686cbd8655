// mode: schema
// params:
// How extraction finds the entity a name means: the graph's entity of the same normalised name
// (domain/extraction.py: normalise), one index seek per extracted name.
CREATE INDEX entity_graph_norm_name IF NOT EXISTS FOR (e:Entity) ON (e.graph, e.normName)
