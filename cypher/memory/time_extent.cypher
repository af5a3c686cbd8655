// mode: read
// params: graph
// The span of when the graph's memories happened (from the start of the first to end, to the end of
// the last, by the index on (graph, occurredTo)): a month or day a query names without its year is
// read inside it (domain/when.py). The times memories mention are left out: a stray number read as a
// year ("2050 followers") would stretch it.
OPTIONAL MATCH (first:Memory) WHERE first.graph = $graph AND first.occurredTo IS NOT NULL
WITH first ORDER BY first.occurredTo LIMIT 1
OPTIONAL MATCH (last:Memory) WHERE last.graph = $graph AND last.occurredTo IS NOT NULL
WITH first, last ORDER BY last.occurredTo DESC LIMIT 1
RETURN first.occurredFrom AS start, last.occurredTo AS end
