// mode: read
// params: graph, ids
// Which of these memory ids are in the graph (a memory may only supersede memories of its own graph).
UNWIND $ids AS id
OPTIONAL MATCH (m:Memory {graph: $graph, id: id})
RETURN collect(m.id) AS ids
