// mode: schema
// params:
// Keyword recall. `graph` is indexed too so a query is scoped to its tenant inside Lucene.
CREATE FULLTEXT INDEX memory_text IF NOT EXISTS FOR (m:Memory) ON EACH [m.text, m.tags, m.graph]
OPTIONS {indexConfig: {`fulltext.analyzer`: 'english'}}
