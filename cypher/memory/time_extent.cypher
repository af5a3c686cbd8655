// mode: read
// params: graph
// The span of the graph's times (the first and the last `timeTo`, by the index on (graph, timeTo)):
// a month or day a query names without its year is read inside it (domain/when.py).
OPTIONAL MATCH (first:Memory) WHERE first.graph = $graph AND first.timeTo IS NOT NULL
WITH first ORDER BY first.timeTo LIMIT 1
OPTIONAL MATCH (last:Memory) WHERE last.graph = $graph AND last.timeTo IS NOT NULL
WITH first, last ORDER BY last.timeTo DESC LIMIT 1
RETURN first.timeFrom AS start, last.timeTo AS end
