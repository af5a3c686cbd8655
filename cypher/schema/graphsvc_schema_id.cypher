// mode: schema
// params:
// One marker of the schema that wrote this database (schema/marker, schema/mark).
CREATE CONSTRAINT graphsvc_schema_id IF NOT EXISTS FOR (s:GraphsvcSchema) REQUIRE s.id IS UNIQUE
