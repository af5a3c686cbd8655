// mode: write
// params: delta
// What a page of imported memories adds to its graph's term statistics, as one TermDelta node that
// the term folder folds into the counters later (services/index/term_fold.py), as after a remember.
CREATE (d:TermDelta)
SET d = $delta
RETURN count(d) AS written
