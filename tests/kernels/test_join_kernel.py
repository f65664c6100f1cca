"""Streaming join kernel: the exact changelog Flink 2.3's StreamingJoinOperator emits, per scenario.

Each scenario feeds one record per batch (so the order between the sides is the
listed one) and compares the whole emitted changelog.
"""

from __future__ import annotations

import pandas as pd
import pytest

from changeflow.kernels.join import StreamingJoin
from changeflow.kernels.state import InMemoryKeyedState
from changeflow.table.expressions import col
from changeflow.testing.harness import format_changes

from join_helpers import left, make_join, right

SCENARIOS = [
    # (name, join type, condition, input records, expected changelog)
    ("left join: left row first, then its match arrives, then the match retracts", "LEFT", None,
     [left("+I", 1, "a"), right("+I", 1, "eu"), right("-D", 1, "eu")],
     ["+I[1, a, null, null]", "-D[1, a, null, null]", "+I[1, a, 1, eu]", "-D[1, a, 1, eu]", "+I[1, a, null, null]"]),
    ("left join: right row first, then the left row", "LEFT", None,
     [right("+I", 1, "eu"), left("+I", 1, "a")],
     ["+I[1, a, 1, eu]"]),
    ("left join: retract one of two matches keeps the other", "LEFT", None,
     [right("+I", 1, "eu"), right("+I", 1, "us"), left("+I", 1, "a"), right("-D", 1, "us")],
     ["+I[1, a, 1, eu]", "+I[1, a, 1, us]", "-D[1, a, 1, us]"]),
    ("left join: the left row retracts while matched", "LEFT", None,
     [left("+I", 1, "a"), right("+I", 1, "eu"), left("-D", 1, "a")],
     ["+I[1, a, null, null]", "-D[1, a, null, null]", "+I[1, a, 1, eu]", "-D[1, a, 1, eu]"]),
    ("left join: an update of the left row is a delete and an insert", "LEFT", None,
     [right("+I", 1, "eu"), left("+I", 1, "a"), left("-U", 1, "a"), left("+U", 1, "b")],
     ["+I[1, a, 1, eu]", "-D[1, a, 1, eu]", "+I[1, b, 1, eu]"]),
    ("right join: right row first, then its match, then the match retracts", "RIGHT", None,
     [right("+I", 1, "eu"), left("+I", 1, "a"), left("-D", 1, "a")],
     ["+I[null, null, 1, eu]", "-D[null, null, 1, eu]", "+I[1, a, 1, eu]", "-D[1, a, 1, eu]",
      "+I[null, null, 1, eu]"]),
    ("inner join: keeps the input's row kind for -U/+U", "INNER", None,
     [right("+I", 1, "eu"), left("+I", 1, "a"), left("-U", 1, "a"), left("+U", 1, "b")],
     ["+I[1, a, 1, eu]", "-U[1, a, 1, eu]", "+U[1, b, 1, eu]"]),
    ("inner join: retract the only match", "INNER", None,
     [left("+I", 1, "a"), right("+I", 1, "eu"), right("-D", 1, "eu")],
     ["+I[1, a, 1, eu]", "-D[1, a, 1, eu]"]),
    ("inner join: one row matches every copy of a duplicate", "INNER", None,
     [right("+I", 1, "eu"), right("+I", 1, "eu"), left("+I", 1, "a"), right("-D", 1, "eu")],
     ["+I[1, a, 1, eu]", "+I[1, a, 1, eu]", "-D[1, a, 1, eu]"]),
    ("full join: left first, right matches, left retracts", "FULL", None,
     [left("+I", 1, "a"), right("+I", 1, "eu"), left("-D", 1, "a")],
     ["+I[1, a, null, null]", "-D[1, a, null, null]", "+I[1, a, 1, eu]", "-D[1, a, 1, eu]",
      "+I[null, null, 1, eu]"]),
    ("full join: two unmatched copies are un-padded one by one", "FULL", None,
     [right("+I", 1, "eu"), right("+I", 1, "eu"), left("+I", 1, "a")],
     ["+I[null, null, 1, eu]", "+I[null, null, 1, eu]", "-D[null, null, 1, eu]", "+I[1, a, 1, eu]",
      "-D[null, null, 1, eu]", "+I[1, a, 1, eu]"]),
    ("full join: the padding returns only when the last match retracts", "FULL", None,
     [right("+I", 1, "eu"), left("+I", 1, "a"), left("+I", 1, "b"), left("-D", 1, "a"), left("-D", 1, "b")],
     ["+I[null, null, 1, eu]", "-D[null, null, 1, eu]", "+I[1, a, 1, eu]", "+I[1, b, 1, eu]",
      "-D[1, a, 1, eu]", "-D[1, b, 1, eu]", "+I[null, null, 1, eu]"]),
    ("null keys never match: left join pads them, inner side drops them", "LEFT", None,
     [right("+I", None, "eu"), left("+I", None, "a"), left("-D", None, "a")],
     ["+I[null, a, null, null]", "-D[null, a, null, null]"]),
    ("null keys never match: full join pads both sides", "FULL", None,
     [left("+I", None, "a"), right("+I", None, "eu")],
     ["+I[null, a, null, null]", "+I[null, null, null, eu]"]),
    ("non-equi condition: a pair failing it is no match", "LEFT", col("v") < col("v0"),
     [left("+I", 1, "m"), right("+I", 1, "a"), right("+I", 1, "z"), right("-D", 1, "a")],
     ["+I[1, m, null, null]", "-D[1, m, null, null]", "+I[1, m, 1, z]"]),
    ("non-equi condition counts associations of the outer side", "FULL", col("v") < col("v0"),
     [right("+I", 1, "z"), right("+I", 1, "a"), left("+I", 1, "m"), left("-D", 1, "m")],
     ["+I[null, null, 1, z]", "+I[null, null, 1, a]", "-D[null, null, 1, z]", "+I[1, m, 1, z]",
      "-D[1, m, 1, z]", "+I[null, null, 1, z]"]),
    ("non-equi condition with a NULL operand filters the pair", "INNER", col("v") < col("v0"),
     [right("+I", 1, None), left("+I", 1, "a")],
     []),
]


@pytest.mark.parametrize("name,join_type,condition,records,expected", SCENARIOS, ids=[s[0] for s in SCENARIOS])
def test_join_scenario(name, join_type, condition, records, expected):
    h = make_join(join_type, condition)
    assert format_changes(h.process_each(records)) == expected


def test_one_batch_orders_the_sides_by_source_position():
    # Both sources number their rows from 0: the left row 0 goes before the right row 0.
    h = make_join("LEFT")
    frame = h.frame([left("+I", 1, "a"), right("+I", 1, "eu")])
    frame["_seq"] = [0, 0]
    out = h.process_frame(frame)
    assert list(out["_kind"]) == [0, 3, 0]  # +I[1, a, null, null], -D[...], +I[1, a, 1, eu]
    assert list(out["_sub"]) == [0, 1, 2]


def test_state_survives_between_batches_and_is_dropped_when_empty():
    h = make_join("INNER")
    h.process([left("+I", 1, "a")])
    assert h.state.row_count("left") == 1
    h.process([left("-D", 1, "a")])
    assert h.state.row_count("left") == 0


def test_join_without_equi_keys_matches_every_pair_passing_the_condition():
    join = StreamingJoin("INNER", ["a"], ["b"], [], [], col("a") < col("b"))
    state = InMemoryKeyedState()
    batch = pd.DataFrame({"_side": [0, 0, 1], "a": pd.array([1, 5, None], "Int64"),
                          "b": pd.array([None, None, 3], "Int64"),
                          "_kind": pd.array([0, 0, 0], "int8"), "_seq": [0, 1, 0], "_sub": [0, 0, 0]})
    out = join.process(batch, state)
    assert out[["a", "b"]].astype(object).values.tolist() == [[1, 3]]


def test_bad_input_is_named():
    h = make_join("INNER")
    frame = h.frame([left("+I", 1, "a")])
    frame["_side"] = 7
    with pytest.raises(ValueError, match="_side=7"):
        h.process_frame(frame)
    with pytest.raises(ValueError, match="unknown join type 'CROSS'"):
        StreamingJoin("cross", ["a"], ["b"], ["a"], ["b"])
    with pytest.raises(ValueError, match="both sides have"):
        StreamingJoin("INNER", ["a"], ["a"], ["a"], ["a"])
