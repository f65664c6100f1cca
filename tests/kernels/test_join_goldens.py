"""The join kernel against Flink 2.3's recorded join changelogs (``conformance/goldens/joins``).

Each case of ``conformance/join_cases.py`` is rebuilt from kernels without Spark: each
source, aggregated first where the case says so (the group-aggregate kernel), then
the streaming join kernel over both changelogs. Flink interleaves its two sources
nondeterministically, so streaming cases compare the materialized result (and that
the changelog never retracts a row it does not hold). Mini-batch cases run as one
bundle per source or one bundle for both: Flink's join finishes a bundle whenever an
input's watermark arrives (a bounded source ends with one), so it cuts the bundles by
timing. Flink's changes must be the same multiset as changeflow's for one of those
bundle splits: the folding removed the same intermediate changes. Batch
cases compare Flink's batch rows with the streaming result materialized (the
invariant).
"""

from __future__ import annotations

import json
import pathlib
from collections import Counter

import numpy as np
import pandas as pd
import pytest

from changeflow.common.types import DataTypes
from changeflow.kernels.aggregate import AggCall, GroupAggregate
from changeflow.kernels.changelog import KIND, SEQ, SUB
from changeflow.kernels.join import StreamingJoin
from changeflow.kernels.state import InMemoryKeyedState
from changeflow.table.expressions import col
from changeflow.testing.harness import materialize, rows_of
from conformance.join_cases import CASES

GOLDENS = pathlib.Path(__file__).resolve().parents[2] / "conformance" / "goldens" / "joins"
KINDS = ["+I", "-U", "+U", "-D"]
CONDITIONS = {"l.v < r.v - 95": col("v") < col("v0") - 95}


def side_changelog(rows, pre: bool, mini_batch: bool, suffix: str) -> pd.DataFrame:
    """One join input: the source rows as +I, or their aggregation's changelog."""
    frame = pd.DataFrame({"k": pd.array([r[0] for r in rows], dtype="Int64"),
                          "v": pd.array([r[1] for r in rows], dtype="Int64")})
    frame[KIND] = np.zeros(len(rows), dtype=np.int8)
    frame[SEQ] = np.arange(len(rows), dtype=np.int64)
    frame[SUB] = np.zeros(len(rows), dtype=np.int64)
    if pre:
        agg = GroupAggregate(["k"], [AggCall("sum", "v", DataTypes.INT(), "v"), AggCall("count_star", None, None, "c")],
                             mini_batch=mini_batch, input_insert_only=True)
        frame = agg.process(frame, InMemoryKeyedState())
    return frame.rename(columns={c: c + suffix for c in frame.columns if not c.startswith("_")})


def run_case(case, bundles="one"):
    """The join's changes; ``bundles`` is "one" (both inputs in one batch), "left-first" or "right-first"."""
    mini_batch = bool(case.config)
    left = side_changelog(case.left, case.left_pre, mini_batch, "")
    right = side_changelog(case.right, case.right_pre, mini_batch, "0")
    left_cols = [c for c in left.columns if not c.startswith("_")]
    right_cols = [c for c in right.columns if not c.startswith("_")]
    join = StreamingJoin(case.join_type, left_cols, right_cols, ["k"], ["k0"], CONDITIONS.get(case.condition),
                         key_dtypes=["Int64"], mini_batch=mini_batch,
                         left_unique_key=["k"] if case.left_pre else None,
                         right_unique_key=["k0"] if case.right_pre else None)
    state = InMemoryKeyedState()
    if bundles == "one":
        outs = [join.process_sides(left, right, state)]
    elif bundles == "left-first":
        outs = [join.process_sides(left, None, state), join.process_sides(None, right, state)]
    else:
        outs = [join.process_sides(None, right, state), join.process_sides(left, None, state)]
    return [row for out in outs for row in rows_of(out, left_cols + right_cols)]


def flink_changes(golden):
    from changeflow.common.row import Row
    from changeflow.common.row_kind import RowKind

    return [Row.of(RowKind.from_short_string(kind), tuple(values)) for kind, values in golden["changes"]]


def _signature(changes):
    return Counter((str(c.get_row_kind()), tuple(c)) for c in changes)


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_join_case_matches_flink(case):
    golden = json.loads((GOLDENS / f"{case.name}.json").read_text())
    ours = run_case(case)
    flink = flink_changes(golden)
    if case.mode == "batch":
        assert materialize(ours) == materialize(flink)
        return
    assert materialize(ours) == materialize(flink)
    if case.config:
        splits = {b: _signature(run_case(case, b)) for b in ("one", "left-first", "right-first")}
        assert _signature(flink) in splits.values(), f"Flink's changes match no bundle split: {splits}"
