// mode: schema
// params:
// The memories a write could not read in time (`extractFirst`, services/extraction.py): the worker's
// claim (extract/claim) takes them first, found by this index whatever the backlog holds.
CREATE INDEX unextracted_first IF NOT EXISTS FOR (m:Unextracted) ON (m.extractFirst)
