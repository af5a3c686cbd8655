// mode: read
// params: graph, contexts
// For each context: how often it is reinforced, and which events contradict it (the latest ten).
UNWIND $contexts AS cid
MATCH (c:Entity:Context {graph: $graph, id: 'Context:' + cid})  // Entity: its (graph, id) index
RETURN cid AS context_id, COUNT { (c)<-[:REINFORCES]-(:Memory) } AS reinforced,
       COLLECT {
         MATCH (m:Memory)-[:CONTRADICTS]->(c)
         WITH m ORDER BY m.createdAt DESC
         RETURN {id: m.id, text: m.text}
         LIMIT 10
       } AS contradictedBy
