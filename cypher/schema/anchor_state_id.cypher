// mode: schema
// params:
// One anchoring state (lease, fence, batch sequence) per database: without this, two replicas taking
// the first lease at once could each MERGE one (seen in 8 of 15 trials).
CREATE CONSTRAINT anchor_state_id IF NOT EXISTS FOR (s:AnchorState) REQUIRE s.id IS UNIQUE
