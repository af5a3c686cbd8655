// mode: schema
// params:
// Keyword recall over each memory's own text and its window (the text of the memories remembered
// just before and after it; see services/memory.py). `graph` is indexed so a query is scoped to its
// tenant inside Lucene. The English analyzer stems (Porter) and drops a short stop list.
CREATE FULLTEXT INDEX memory_search IF NOT EXISTS FOR (m:Memory) ON EACH [m.text, m.window, m.tags, m.graph]
OPTIONS {indexConfig: {`fulltext.analyzer`: 'english'}}
