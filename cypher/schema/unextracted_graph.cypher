// mode: schema
// params:
// The extraction backlog by graph: the worker's claim (extract/claim) seeks each graph's waiting
// memories, so another graph's backlog, however large, is never read to find them.
CREATE INDEX unextracted_graph IF NOT EXISTS FOR (m:Unextracted) ON (m.graph)
