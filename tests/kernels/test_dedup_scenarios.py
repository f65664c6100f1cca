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


# --- over retracting input (RetractingDeduplicate: the rows added and not retracted, per key) ---------------------

def last(mini_batch=False):
    return dedup(True, mini_batch, retracting=True)


def first(mini_batch=False):
    return dedup(False, mini_batch, retracting=True)


D = delete_record
RETRACTING = [
    Scenario("keep last - retracting the shown row falls back to the previous surviving row", last(),
             [[I("a", "x", 1), I("a", "y", 2), I("a", "z", 3)], [D("a", "z", 3)]],
             [I("a", "x", 1), UB("a", "x", 1), UA("a", "y", 2), UB("a", "y", 2), UA("a", "z", 3),
              UB("a", "z", 3), UA("a", "y", 2)]),
    Scenario("keep first - retracting the shown row falls forward to the next surviving row", first(),
             [[I("a", "x", 1), I("a", "y", 2)], [UB("a", "x", 1), UA("a", "x", 9)]],
             # -U x: y is shown; +U x,9 joins the end of the history, y stays shown.
             [I("a", "x", 1), UB("a", "x", 1), UA("a", "y", 2)]),
    Scenario("keep last - retracting a middle row changes nothing", last(),
             [[I("a", "x", 1), I("a", "y", 2), I("a", "z", 3)], [D("a", "y", 2)], [D("a", "z", 3)]],
             [I("a", "x", 1), UB("a", "x", 1), UA("a", "y", 2), UB("a", "y", 2), UA("a", "z", 3),
              UB("a", "z", 3), UA("a", "x", 1)]),
    Scenario("keep first - retracting a later row changes nothing", first(),
             [[I("a", "x", 1), I("a", "y", 2), I("a", "z", 3), D("a", "z", 3), D("a", "y", 2)]],
             [I("a", "x", 1)]),
    Scenario("keep last - retracting every row deletes the key", last(),
             [[I("a", "x", 1), I("b", "y", 2)], [D("a", "x", 1), D("b", "y", 2)]],
             [I("a", "x", 1), I("b", "y", 2), D("a", "x", 1), D("b", "y", 2)]),
    Scenario("keep first - retracting every row deletes the key", first(),
             [[I("a", "x", 1), I("a", "y", 2), UB("a", "y", 2), D("a", "x", 1)]],
             [I("a", "x", 1), D("a", "x", 1)]),
    Scenario("keep last - re-insert after the key emptied", last(),
             [[I("a", "x", 1), D("a", "x", 1)], [I("a", "x", 1), I("a", "q", 4)]],
             [I("a", "x", 1), D("a", "x", 1), I("a", "x", 1), UB("a", "x", 1), UA("a", "q", 4)]),
    Scenario("keep first - re-insert after the key emptied", first(),
             [[I("a", "x", 1), D("a", "x", 1), I("a", "y", 2)]],
             [I("a", "x", 1), D("a", "x", 1), I("a", "y", 2)]),
    Scenario("keep last - an equal row arriving changes nothing shown", last(),
             [[I("a", "x", 1), I("a", "x", 1), D("a", "x", 1)], [D("a", "x", 1)]],
             [I("a", "x", 1), D("a", "x", 1)]),
    Scenario("keep last - duplicates: a retraction removes the oldest equal row", last(),
             # history x, y, x; -x removes the first x: y, x -> x still shown; -x again: y shown.
             [[I("a", "x", 1), I("a", "y", 2), I("a", "x", 1)], [D("a", "x", 1)], [D("a", "x", 1)]],
             [I("a", "x", 1), UB("a", "x", 1), UA("a", "y", 2), UB("a", "y", 2), UA("a", "x", 1),
              UB("a", "x", 1), UA("a", "y", 2)]),
    Scenario("keep first - duplicates: a retraction removes the oldest equal row", first(),
             # history x, y, x; -x removes the first x: y is shown; -y: the second x is shown.
             [[I("a", "x", 1), I("a", "y", 2), I("a", "x", 1), D("a", "x", 1), D("a", "y", 2)]],
             [I("a", "x", 1), UB("a", "x", 1), UA("a", "y", 2), UB("a", "y", 2), UA("a", "x", 1)]),
    Scenario("keep first - the shown row retracted while an equal row follows changes nothing", first(),
             [[I("a", "x", 1), I("a", "x", 1), D("a", "x", 1)]], [I("a", "x", 1)]),
    Scenario("a retraction of a row not held changes nothing", last(),
             [[D("a", "x", 1), I("a", "y", 2), D("a", "x", 1), UB("b", "z", 3)]], [I("a", "y", 2)]),
    Scenario("nulls are equal: a null row retracts its null twin", last(),
             [[I(None, None, None), I(None, "x", None)], [D(None, "x", None)]],
             [I(None, None, None), UB(None, None, None), UA(None, "x", None), UB(None, "x", None),
              UA(None, None, None)]),
    Scenario("keep last mini-batch - one net change per key per bundle", last(mini_batch=True),
             [[I("a", "x", 1), I("a", "y", 2), I("b", "z", 3)], [D("a", "y", 2), I("a", "q", 4), I("b", "w", 5)],
              [D("b", "w", 5)]],
             [I("a", "y", 2), I("b", "z", 3), UB("a", "y", 2), UA("a", "q", 4), UB("b", "z", 3), UA("b", "w", 5),
              UB("b", "w", 5), UA("b", "z", 3)]),
    Scenario("keep last mini-batch - a bundle that ends where it started emits nothing", last(mini_batch=True),
             [[I("a", "x", 1)], [I("a", "y", 2), D("a", "y", 2), D("b", "z", 3)]], [I("a", "x", 1)]),
    Scenario("keep first mini-batch - retract all then re-insert in one bundle", first(mini_batch=True),
             [[I("a", "x", 1), I("a", "y", 2)], [D("a", "x", 1), D("a", "y", 2), I("a", "z", 3)],
              [D("a", "z", 3)]],
             [I("a", "x", 1), UB("a", "x", 1), UA("a", "z", 3), D("a", "z", 3)]),
    Scenario("keep first mini-batch - a key inserted and emptied within the bundle emits nothing",
             first(mini_batch=True), [[I("a", "x", 1), UB("a", "x", 1), UA("a", "y", 2), D("a", "y", 2)]], []),
]


@pytest.mark.parametrize("scenario", RETRACTING, ids=ids(RETRACTING))
def test_dedup_over_retracting_input(scenario):
    scenario.run()


def test_retracting_dedup_output_stamps_follow_the_records():
    """Per record: each change carries its record's ``_seq`` and a ``_sub`` below the next record's."""
    from changeflow.kernels.state import InMemoryKeyedState
    from changeflow.testing.harness import KernelHarness

    h = KernelHarness(last(), ["k", "name", "v"], dtypes={"k": object, "name": object, "v": "Int64"})
    out = h.kernel.process(h.frame([I("a", "x", 1), I("a", "y", 2), D("a", "y", 2)]), InMemoryKeyedState())
    assert out["_seq"].tolist() == [0, 1, 1, 2, 2]
    assert out["_sub"].tolist() == [0, 0, 1, 0, 1]
