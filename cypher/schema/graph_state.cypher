// mode: schema
// params:
// One node per graph (named by it, not in it): its remember-order counter and the lock writers queue on.
CREATE CONSTRAINT graph_state_name IF NOT EXISTS FOR (s:GraphState) REQUIRE s.name IS UNIQUE
