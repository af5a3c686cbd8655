// mode: read
// params: graph
// The graph's tag (GraphState: 32 random bytes made at its first seal): what an auditor pins.
MATCH (s:GraphState {name: $graph})
RETURN s.graphTag AS graphTag
