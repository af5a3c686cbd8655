// mode: read
// params:
// Memories not yet extracted, across every graph (the label's count: no scan).
MATCH (m:Unextracted)
RETURN count(m) AS backlog
