// mode: schema
// params:
// The foundation's text-only index, replaced by memory_search.
DROP INDEX memory_text IF EXISTS
