"""Export, import and audit: a graph as a file, moved between servers and checked against the chain."""
