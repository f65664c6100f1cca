"""Deduplication on processing time: keep first / keep last, with and without mini-batch."""

import pytest
from rank_helpers import Scenario, dedup, ids

from changeflow.testing import delete_record, insert_record as I, update_after_record as UA, \
    update_before_record as UB

SCENARIOS = [
    Scenario("keep first - later rows of a key are dropped", dedup(False),
             [[I("a", "x", 1), I("b", "y", 2), I("a", "z", 3)]], [I("a", "x", 1), I("b", "y", 2)]),
    Scenario("keep first - state carries over batches", dedup(False),
             [[I("a", "x", 1)], [I("a", "z", 3), I("c", "w", 4)]], [I("a", "x", 1), I("c", "w", 4)]),
    Scenario("keep first mini-batch - the bundle's first row", dedup(False, mini_batch=True),
             [[I("a", "x", 1), I("a", "z", 3)], [I("a", "q", 5)]], [I("a", "x", 1)]),
    Scenario("keep last - a later row with an equal key updates", dedup(True),
             [[I("a", "x", 1), I("b", "y", 2), I("a", "z", 3)]],
             [I("a", "x", 1), I("b", "y", 2), UB("a", "x", 1), UA("a", "z", 3)]),
    Scenario("keep last - an equal repeated row still updates", dedup(True),
             [[I("a", "x", 1), I("a", "x", 1)]], [I("a", "x", 1), UB("a", "x", 1), UA("a", "x", 1)]),
    Scenario("keep last - the stored row is the one retracted", dedup(True),
             [[I("a", "x", 1)], [I("a", "z", 3), I("a", "q", 4)]],
             [I("a", "x", 1), UB("a", "x", 1), UA("a", "z", 3), UB("a", "z", 3), UA("a", "q", 4)]),
    Scenario("keep last - a null key is a key", dedup(True),
             [[I(None, "x", 1), I(None, "z", 2)]], [I(None, "x", 1), UB(None, "x", 1), UA(None, "z", 2)]),
    Scenario("keep last mini-batch - one update per key per bundle", dedup(True, mini_batch=True),
             [[I("a", "x", 1), I("a", "z", 3), I("b", "y", 2)], [I("a", "q", 4), I("a", "r", 5)]],
             [I("a", "z", 3), I("b", "y", 2), UB("a", "z", 3), UA("a", "r", 5)]),
]


@pytest.mark.parametrize("scenario", SCENARIOS, ids=ids(SCENARIOS))
def test_dedup(scenario):
    scenario.run()


def test_dedup_rejects_retractions_naming_the_record():
    s = Scenario("", dedup(True), [[I("a", "x", 1), delete_record("a", "x", 1)]], [])
    with pytest.raises(ValueError, match="insert-only input but got the retraction .*'name': 'x'"):
        s.run()
