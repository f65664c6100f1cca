"""Deduplication over retracting input: one record touches a bounded number of state rows, whatever the history."""

import pytest
from rank_helpers import DTYPES, dedup
from test_materializer_state_cost import CountingState

from changeflow.testing.harness import KernelHarness, delete_record, insert_record, update_after_record, \
    update_before_record


def rows_touched(keep_last, mini_batch, history, record):
    state = CountingState()
    h = KernelHarness(dedup(keep_last, mini_batch, retracting=True), ["k", "name", "v"], dtypes=DTYPES, state=state)
    h.process([insert_record("a", "x", i) for i in range(history)])
    state.rows = 0
    h.process(record(history))
    return state.rows


RECORDS = {
    "append": lambda n: [insert_record("a", "y", -1)],
    "retract the first row": lambda n: [delete_record("a", "x", 0)],
    "retract a middle row": lambda n: [delete_record("a", "x", n // 2)],
    "retract the last row": lambda n: [delete_record("a", "x", n - 1)],
    "update a middle row": lambda n: [update_before_record("a", "x", n // 2), update_after_record("a", "x", -2)],
    "retract a row not held": lambda n: [delete_record("a", "zz", 7)],
}


@pytest.mark.parametrize("record", RECORDS.values(), ids=RECORDS.keys())
@pytest.mark.parametrize("keep_last", [True, False], ids=["keep-last", "keep-first"])
@pytest.mark.parametrize("mini_batch", [False, True], ids=["per-record", "mini-batch"])
def test_one_record_touches_a_bounded_number_of_state_rows(record, keep_last, mini_batch):
    short, long = rows_touched(keep_last, mini_batch, 50, record), rows_touched(keep_last, mini_batch, 2000, record)
    assert short == long
    assert long <= 20
