"""Top-N scenarios: rows entering and leaving, rank shifts, promotions, ties, offsets, nulls, mini-batch."""

import pytest
from rank_helpers import Scenario, ids, top_n

from changeflow.kernels.rank import TopN
from changeflow.testing import delete_record as D, insert_record as I, update_after_record as UA, \
    update_before_record as UB

SCENARIOS = [
    Scenario("top-3 without row number - rows enter, the pushed-out row is deleted", top_n(rank_column=None),
             [[I("a", "n1", 1), I("a", "n2", 2), I("a", "n3", 3), I("a", "n4", 4), I("a", "n0", 0)]],
             [I("a", "n1", 1), I("a", "n2", 2), I("a", "n3", 3), D("a", "n1", 1), I("a", "n4", 4)]),
    Scenario("top-3 with row number - ranks below an insert shift", top_n(),
             [[I("a", "n1", 1), I("a", "n3", 3), I("a", "n2", 2)]],
             [I("a", "n1", 1, 1),
              UB("a", "n1", 1, 1), UA("a", "n3", 3, 1), I("a", "n1", 1, 2),
              UB("a", "n1", 1, 2), UA("a", "n2", 2, 2), I("a", "n1", 1, 3)]),
    Scenario("top-2 with row number - a full top-N shifts its last row out", top_n(2),
             [[I("a", "n1", 1), I("a", "n2", 2)], [I("a", "n3", 3)]],
             [I("a", "n1", 1, 1), UB("a", "n1", 1, 1), UA("a", "n2", 2, 1), I("a", "n1", 1, 2),
              UB("a", "n2", 2, 1), UA("a", "n3", 3, 1), UB("a", "n1", 1, 2), UA("a", "n2", 2, 2)]),
    Scenario("ties - an equal sort key ranks after the earlier rows", top_n(2),
             [[I("a", "n1", 5), I("a", "n2", 5), I("a", "n3", 5)]],
             [I("a", "n1", 5, 1), I("a", "n2", 5, 2)]),
    Scenario("retraction promotes row N+1", top_n(2, rank_column=None, insert_only=False),
             [[I("a", "n1", 3), I("a", "n2", 2), I("a", "n3", 1), D("a", "n1", 3)]],
             [I("a", "n1", 3), I("a", "n2", 2), D("a", "n1", 3), I("a", "n3", 1)]),
    Scenario("retraction with row number - rows move up a rank", top_n(2, insert_only=False),
             [[I("a", "n1", 3), I("a", "n2", 2), I("a", "n3", 1)], [UB("a", "n1", 3), UA("a", "n1", 0)]],
             [I("a", "n1", 3, 1), I("a", "n2", 2, 2),
              UB("a", "n1", 3, 1), UA("a", "n2", 2, 1), UB("a", "n2", 2, 2), UA("a", "n3", 1, 2)]),
    Scenario("retraction of the last row - delete", top_n(2, insert_only=False),
             [[I("a", "n1", 3), D("a", "n1", 3)]], [I("a", "n1", 3, 1), D("a", "n1", 3, 1)]),
    Scenario("retraction of a row outside the top-N - nothing", top_n(1, rank_column=None, insert_only=False),
             [[I("a", "n1", 3), I("a", "n2", 2), D("a", "n2", 2)]], [I("a", "n1", 3)]),
    Scenario("retraction of equal rows - the first equal row is removed", top_n(3, insert_only=False),
             [[I("a", "x", 1), I("a", "x", 1), D("a", "x", 1)]],
             [I("a", "x", 1, 1), I("a", "x", 1, 2), UB("a", "x", 1, 1), UA("a", "x", 1, 1), D("a", "x", 1, 2)]),
    Scenario("rank_start > 1 without row number - positional updates", top_n(3, start=2, rank_column=None),
             [[I("a", "n1", 1), I("a", "n2", 2), I("a", "n3", 3)]],
             [I("a", "n1", 1), UB("a", "n1", 1), UA("a", "n2", 2), I("a", "n1", 1)]),
    Scenario("null sort keys last for DESC", top_n(2, rank_column=None),
             [[I("a", "n0", None), I("a", "n1", 1), I("a", "n2", 2)]],
             [I("a", "n0", None), I("a", "n1", 1), D("a", "n0", None), I("a", "n2", 2)]),
    Scenario("null sort keys first for ASC NULLS FIRST", top_n(1, rank_column=None, ascending=True, nulls_first=True),
             [[I("a", "n1", 1), I("a", "n0", None)]], [I("a", "n1", 1), D("a", "n1", 1), I("a", "n0", None)]),
    Scenario("partitions rank independently", top_n(1),
             [[I("a", "n1", 1), I("b", "m1", 1), I("a", "n2", 2)]],
             [I("a", "n1", 1, 1), I("b", "m1", 1, 1), UB("a", "n1", 1, 1), UA("a", "n2", 2, 1)]),
    Scenario("mini-batch - only the net change of a bundle, no intermediate rows", top_n(2, mini_batch=True),
             [[I("a", "n1", 1), I("a", "n2", 2), I("a", "n3", 3)], [I("a", "n0", 0), I("a", "n4", 4)]],
             [I("a", "n3", 3, 1), I("a", "n2", 2, 2), UB("a", "n3", 3, 1), UA("a", "n4", 4, 1),
              UB("a", "n2", 2, 2), UA("a", "n3", 3, 2)]),
    Scenario("mini-batch without row number - set difference", top_n(2, mini_batch=True, rank_column=None),
             [[I("a", "n1", 1), I("a", "n2", 2)], [I("a", "n3", 3), I("a", "n0", 0)]],
             [I("a", "n2", 2), I("a", "n1", 1), D("a", "n1", 1), I("a", "n3", 3)]),
    Scenario("mini-batch over retractions - a bundle that restores the top-N emits nothing",
             top_n(2, mini_batch=True, insert_only=False),
             [[I("a", "n1", 1), I("a", "n2", 2)], [D("a", "n2", 2), I("a", "n2", 2)]],
             [I("a", "n2", 2, 1), I("a", "n1", 1, 2)]),
]



def test_global_top_n_without_partition_keys():
    kernel = TopN(["k", "name", "v"], [], [("v", False, False)], 1, 1, None, input_insert_only=True,
                  mini_batch=False)
    Scenario("", kernel, [[I("a", "n1", 1), I("b", "m1", 2)], [I("a", "n2", 0)]],
             [I("a", "n1", 1), D("a", "n1", 1), I("b", "m1", 2)]).run()


def test_two_sort_columns_order_lexicographically():
    kernel = TopN(["k", "name", "v"], ["k"], [("v", True, False), ("name", False, False)], 1, 2, "rn",
                  input_insert_only=True, mini_batch=False)
    Scenario("", kernel, [[I("a", "x", 1), I("a", "y", 1), I("a", "w", 0)]],
             [I("a", "x", 1, 1), UB("a", "x", 1, 1), UA("a", "y", 1, 1), I("a", "x", 1, 2),
              UB("a", "y", 1, 1), UA("a", "w", 0, 1), UB("a", "x", 1, 2), UA("a", "y", 1, 2)]).run()


@pytest.mark.parametrize("scenario", SCENARIOS, ids=ids(SCENARIOS))
def test_top_n(scenario):
    scenario.run()


def test_top_n_rejects_retractions_over_insert_only_input():
    s = Scenario("", top_n(), [[I("a", "n1", 1), D("a", "n1", 1)]], [])
    with pytest.raises(ValueError, match="Top-N takes insert-only input but got the retraction"):
        s.run()


@pytest.mark.parametrize("start,end", [(0, 3), (3, 2)])
def test_top_n_rejects_bad_rank_ranges(start, end):
    with pytest.raises(ValueError, match="rank range"):
        top_n(end, start=start)
