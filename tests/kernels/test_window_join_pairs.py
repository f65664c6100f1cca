"""The window join's firing, done with array operations, against the nested loops of Flink's join.

``WindowJoin._join`` takes the fired windows' rows of each side (sorted by window end and
arrival) and emits, window by window, what Flink's ``WindowJoinOperator`` emits: for each
row of the outer loop (the left side, the right side for a RIGHT join) the rows of the
other side with the same key that meet the condition, in arrival order, then the padding
of outer joins. The reference below is that loop written out pair by pair; the property
compares the exact output, order included, with NULL keys, duplicate rows and a
condition.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from hypothesis import given, settings
from hypothesis import strategies as st

from changeflow.kernels.join.condition import compile_pair_condition
from changeflow.kernels.join.window_join import WEND, WindowJoin
from changeflow.table.expressions import col

LEFT_COLUMNS, RIGHT_COLUMNS = ["k", "v"], ["k0", "w"]


def side_frame(rows: list[tuple], key_dtype: str) -> pd.DataFrame:
    """A side's fired rows as ``_take_due`` gives them: key, window end, columns, sorted by end."""
    rows = sorted(rows, key=lambda r: r[1])
    keys = [r[0] for r in rows]
    return pd.DataFrame({"_jk0": pd.Series(keys, dtype=key_dtype if None not in keys else object),
                         WEND: pd.Series([r[1] for r in rows], dtype="int64"),
                         "c0": pd.Series(keys, dtype=object),
                         "c1": pd.Series([r[2] for r in rows], dtype=object)})


def reference(join: WindowJoin, left: pd.DataFrame, right: pd.DataFrame) -> list[tuple]:
    """Flink's loops, one pair at a time: (window end, left values or None, right values or None)."""
    test = compile_pair_condition(join.condition, *join.columns) if join.condition is not None else None
    out = []
    right_outside = join.join_type == "RIGHT"
    rows = [list(zip(f["c0"], f["c1"], strict=True)) for f in (left, right)]
    keys = [list(zip(f["_jk0"].astype(object).where(f["_jk0"].notna(), None), f[WEND], strict=True))
            for f in (left, right)]
    matched = [set(), set()]
    outer_side = 1 if right_outside else 0
    for i, (key, end) in enumerate(keys[outer_side]):
        for j, (other_key, other_end) in enumerate(keys[1 - outer_side]):
            li, ri = (j, i) if right_outside else (i, j)
            if key is None or key != other_key or end != other_end:
                continue
            if test is None or test(rows[0][li], rows[1][ri]):
                out.append((end, i, 0, j, li, ri))
                matched[0].add(li)
                matched[1].add(ri)
    if join.outer[0]:
        out += [(keys[0][i][1], i, 1, 0, i, -1) for i in range(len(left)) if i not in matched[0]]
    if join.outer[1]:
        base = 0 if right_outside else len(left)
        out += [(keys[1][j][1], base + j, 1, 0, -1, j) for j in range(len(right)) if j not in matched[1]]
    out.sort()
    return [(end, rows[0][li] if li >= 0 else None, rows[1][ri] if ri >= 0 else None)
            for end, _, _, _, li, ri in out]


row = st.tuples(st.sampled_from([1, 2, None]), st.sampled_from([10, 20]), st.integers(0, 3))


@settings(max_examples=200, deadline=None)
@given(st.lists(row, max_size=10), st.lists(row, max_size=10), st.sampled_from(["INNER", "LEFT", "RIGHT", "FULL"]),
       st.booleans(), st.sampled_from(["int64", "Int64"]))
def test_the_array_join_of_fired_windows_equals_flinks_loops(left_rows, right_rows, kind, with_condition, key_dtype):
    condition = (col("v") >= col("w")) if with_condition else None
    join = WindowJoin(kind, LEFT_COLUMNS, RIGHT_COLUMNS, ["k"], ["k0"], "v", "w", condition)
    left, right = side_frame(left_rows, key_dtype), side_frame(right_rows, key_dtype)
    # The kernel reads each side's columns under their output names (k, v / k0, w).
    left_in = pd.concat([left, left[["c0", "c1"]].set_axis(LEFT_COLUMNS, axis=1)], axis=1)
    right_in = pd.concat([right, right[["c0", "c1"]].set_axis(RIGHT_COLUMNS, axis=1)], axis=1)
    out, ends = join._join(left_in, right_in)
    # v and w are never NULL in a real row: a NULL there is padding.
    got = [(int(e), None if pd.isna(v) else (_plain(k), v), None if pd.isna(w) else (_plain(k0), w))
           for e, k, v, k0, w in zip(ends, out["k"], out["v"], out["k0"], out["w"], strict=True)]
    expected = [(e, None if lv is None else (_plain(lv[0]), lv[1]), None if rv is None else (_plain(rv[0]), rv[1]))
                for e, lv, rv in reference(join, left, right)]
    assert got == expected


def _plain(value):
    """NULL as None whatever its kind (pandas NA, NaN)."""
    return None if value is None or pd.isna(value) else value


def test_pairs_of_one_large_window_are_every_left_row_with_every_matching_right_row():
    # q5's shape: one key (the window) holding many rows on each side.
    join = WindowJoin("INNER", LEFT_COLUMNS, RIGHT_COLUMNS, ["k"], ["k0"], "v", "w", col("v") >= col("w"))
    left = pd.DataFrame({"_jk0": np.ones(300, dtype=np.int64), WEND: np.full(300, 10, dtype=np.int64),
                         "k": np.ones(300, dtype=np.int64), "v": np.arange(300, dtype=np.int64)})
    right = pd.DataFrame({"_jk0": np.ones(2, dtype=np.int64), WEND: np.full(2, 10, dtype=np.int64),
                          "k0": np.ones(2, dtype=np.int64), "w": np.asarray([299, 100], dtype=np.int64)})
    out, ends = join._join(left, right)
    expected = [(v, w) for v in range(300) for w in (299, 100) if v >= w]
    assert list(zip(out["v"], out["w"], strict=True)) == expected
    assert (ends == 10).all()
