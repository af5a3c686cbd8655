// mode: write
// params: graph, rows, status
// An export's batches, as the chain holds them, with their transaction and block: FINALIZED once the
// importer's chain audit confirmed them, else (an import told --no-chain) INCLUDED: not final, until
// this server's own reconciliation finds the root at the finalized block. A root this server holds for
// another graph is not taken (the importer counts what was written).
UNWIND $rows AS row
MERGE (b:Batch {root: row.root})
ON CREATE SET b += row, b.graph = $graph, b.title = substring(row.root, 0, 10), b.status = $status
WITH b
WHERE b.graph = $graph
RETURN count(b) AS written
