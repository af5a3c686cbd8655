// mode: read
// params:
MATCH (m:Memory:Pending)
RETURN m.graph AS graph, count(*) AS pending
ORDER BY graph
