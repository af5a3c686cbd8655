// mode: schema
// params:
// Keyword recall over each memory's own text and its window (the text of the memories remembered
// just before and after it; see services/index/windows.py). `graphKey` (one opaque token per graph, see
// services/index/keywords.py) scopes a query to its tenant inside Lucene exactly, so Lucene can stop at the
// top hits. The English analyzer stems (Porter) and drops a short stop list. Eventually consistent:
// Lucene takes a commit's updates in the background rather than in the commit, which was the largest
// part of a remember round's commit; graph/keyword_hits waits for what is queued before it reads, so
// recall still finds every acknowledged memory.
CREATE FULLTEXT INDEX memory_search IF NOT EXISTS FOR (m:Memory) ON EACH [m.text, m.window, m.tags, m.graphKey]
OPTIONS {indexConfig: {`fulltext.analyzer`: 'english', `fulltext.eventually_consistent`: true}}
