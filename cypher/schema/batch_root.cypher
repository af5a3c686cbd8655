// mode: schema
// params:
CREATE CONSTRAINT batch_root IF NOT EXISTS FOR (b:Batch) REQUIRE b.root IS UNIQUE
