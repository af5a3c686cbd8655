// mode: schema
// params:
// The memories a write could not embed in time (`embedFirst`, services/embeddings.py): the worker's
// claim (embed/claim) takes them first, found by this index whatever the backlog holds.
CREATE INDEX unembedded_first IF NOT EXISTS FOR (m:Unembedded) ON (m.embedFirst)
