// mode: write
// params: graph, rows
// An export's batches, as the chain holds them: FINALIZED, with their transaction and block. A root
// this server holds for another graph is not taken (the importer counts what was written).
UNWIND $rows AS row
MERGE (b:Batch {root: row.root})
ON CREATE SET b += row, b.graph = $graph, b.title = substring(row.root, 0, 10), b.status = 'FINALIZED'
WITH b
WHERE b.graph = $graph
RETURN count(b) AS written
