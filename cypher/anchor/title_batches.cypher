// mode: write
// params:
// Start-up: batches sealed before batches had a title get one, their short root (see anchor/seal).
// Scans the batches once (one per anchor, so few).
MATCH (b:Batch)
WHERE b.title IS NULL
SET b.title = substring(b.root, 0, 10)
RETURN count(b) AS titled
