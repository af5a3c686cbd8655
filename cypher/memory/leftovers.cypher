// mode: write
// params: token, rows
// The memories a remember created claimed for their vector (memory/commit's `embedClaim`: its token)
// whose vector was not read within the write's budget (`rows`: graph, id): the write lets them go to
// the embedding worker, first in its line (`embedFirst`: services/at_write.py).
UNWIND $rows AS row
MATCH (m:Memory:Unembedded {graph: row.graph, id: row.id})
WHERE m.embedClaim = $token
SET m.embedFirst = true
REMOVE m.embedClaim
