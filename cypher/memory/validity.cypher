// mode: read
// params: graph, ids
// What recall needs to tell which of these memories hold at an instant: each one's own interval
// (validFrom, else when it was remembered; validTo) and the same start of each memory superseding it;
// and its times (occurredAt and the spans of services/index/times.py), for the answer and the time term.
UNWIND $ids AS id
MATCH (m:Memory {graph: $graph, id: id})
USING INDEX SEEK m:Memory(graph, id)
RETURN collect({
  id: m.id, validFrom: m.validFrom, validTo: m.validTo, createdAt: m.createdAt, occurredAt: m.occurredAt,
  occurredFrom: m.occurredFrom, occurredTo: m.occurredTo, mentionFrom: m.mentionFrom, mentionTo: m.mentionTo,
  successors: [(s:Memory)-[:SUPERSEDES]->(m) | {id: s.id, validFrom: s.validFrom, createdAt: s.createdAt}]
}) AS rows
