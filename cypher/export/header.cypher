// mode: read
// params: graph, unfinished
// An export's header: the graph's tag and last position, the positions forgotten before anchoring,
// and how many of each record it holds (index seeks and counts, whatever the graph's size); and what
// keeps it from being exported: batches not on chain yet, forget records not anchored yet.
OPTIONAL MATCH (s:GraphState {name: $graph})
RETURN s.graphTag AS graphTag, coalesce(s.seq, 0) AS lastSeq, coalesce(s.forgottenSeqs, []) AS forgotten,
       COUNT { MATCH (m:Memory {graph: $graph}) } AS memories,
       COUNT { MATCH (t:Tombstone {graph: $graph}) } AS tombstones,
       COUNT { MATCH (e:Entity {graph: $graph}) } AS entities,
       COUNT { MATCH (:Entity {graph: $graph})-[]->(:Entity) } AS relations,
       COUNT { MATCH (b:Batch {graph: $graph}) WHERE b.status IN ['INCLUDED', 'FINALIZED'] } AS batches,
       COUNT { MATCH (b:Batch {graph: $graph}) WHERE b.status IN $unfinished } AS unfinished,
       COUNT { MATCH (t:Tombstone:Pending {graph: $graph}) } AS unrecorded
