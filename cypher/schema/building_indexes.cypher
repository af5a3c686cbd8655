// mode: read
// params:
// Start-up, after the schema: the indexes not yet online, and how far each has come (store/graph.py
// waits for them: a vector index made again over many memories takes minutes, and a search of an index
// still populating fails).
SHOW INDEXES YIELD name, state, populationPercent
WHERE state <> 'ONLINE'
RETURN name, state, populationPercent
ORDER BY name
