// mode: schema
// params:
// The embedding backlog by graph: the worker's claim (embed/claim) seeks each graph's waiting memories,
// so another graph's backlog, however large, is never read to find them.
CREATE INDEX unembedded_graph IF NOT EXISTS FOR (m:Unembedded) ON (m.graph)
