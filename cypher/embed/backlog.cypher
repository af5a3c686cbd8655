// mode: read
// params:
// Memories not yet embedded, across every graph (the label's count: no scan).
MATCH (m:Unembedded)
RETURN count(m) AS backlog
