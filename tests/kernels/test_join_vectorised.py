"""Property: the vectorised streaming join emits exactly what the per-record path emits.

Random insert-only and upsert changelogs (NULL keys and values, duplicate rows, a
non-equi condition, every join type) go through two kernels, one joining whole
batches with array operations (:mod:`changeflow.kernels.join.vector_join`) and one
forced onto the per-record path. Every output frame must be equal (values, kinds,
``_seq``, ``_sub`` and dtypes), the state they leave equal, and the changelog,
materialized, the batch join of the final inputs.
"""

from __future__ import annotations

from unittest import mock

import pandas as pd
from hypothesis import given, settings
from hypothesis import strategies as st

from changeflow.kernels.join import vector_join
from changeflow.kernels.join.join_state import TABLES
from changeflow.kernels.join.streaming_join import StreamingJoin
from changeflow.testing.harness import KernelHarness, materialize

from join_helpers import COLUMNS, left, right
from test_join_properties import CONDITIONS, reference_join
from test_join_properties import changelogs as join_changelogs


def harness(join_type: str, condition, vectorised: bool, upsert: bool) -> KernelHarness:
    kernel = StreamingJoin(join_type, ["k", "v"], ["k0", "v0"], ["k"], ["k0"], condition,
                           key_dtypes=["Int64"],
                           dtypes={c: "object" if c in ("v", "v0") else "Int64" for c in COLUMNS[1:]},
                           left_unique_key=["k"] if upsert else None, vectorised=vectorised,
                           vector_min_rows=0)
    return KernelHarness(kernel, COLUMNS, dtypes={"_side": "int8", "k": "Int64", "k0": "Int64",
                                                   "v": object, "v0": object})


def changelogs(upsert: bool):
    """Batches of (side, kind, k, v): insert-only, or the left side an upsert stream of its key k."""
    return join_changelogs(unique_left=upsert, retract=False, insert_kinds=("+I",) if upsert else ("+I", "+U"),
                           max_batches=5, max_rows=10)


def check(join_type, condition_name, log, upsert):
    batches, (lefts, rights) = log
    condition = CONDITIONS[condition_name]
    fast, slow = harness(join_type, condition, True, upsert), harness(join_type, condition, False, upsert)
    for batch in batches:
        records = [left(kind, k, v) if side == 0 else right(kind, k, v) for side, kind, k, v in batch]
        out_fast, out_slow = fast.process_frame(fast.frame(records)), slow.process_frame(slow.frame(records))
        pd.testing.assert_frame_equal(out_fast, out_slow)
        fast._collect(out_fast)
        for table in TABLES:
            pd.testing.assert_frame_equal(fast.state.scan(table).sort_values(["_jk0", "k" if table == "left" else "k0"])
                                          .reset_index(drop=True) if len(fast.state.scan(table)) else
                                          fast.state.scan(table),
                                          slow.state.scan(table).sort_values(["_jk0", "k" if table == "left" else "k0"])
                                          .reset_index(drop=True) if len(slow.state.scan(table)) else
                                          slow.state.scan(table), check_dtype=False)
    assert sorted((tuple(r) for r in materialize(fast.changes)), key=repr) == \
        reference_join(join_type, condition, lefts, rights)


@settings(max_examples=100, deadline=None)
@given(log=changelogs(upsert=False), join_type=st.sampled_from(["INNER", "LEFT", "RIGHT", "FULL"]),
       condition=st.sampled_from(sorted(CONDITIONS)))
def test_insert_only_vectorised_equals_per_record_and_batch(log, join_type, condition):
    check(join_type, condition, log, upsert=False)


@settings(max_examples=100, deadline=None)
@given(log=changelogs(upsert=True), join_type=st.sampled_from(["INNER", "LEFT", "RIGHT", "FULL"]),
       condition=st.sampled_from(sorted(CONDITIONS)))
def test_upsert_vectorised_equals_per_record_and_batch(log, join_type, condition):
    check(join_type, condition, log, upsert=True)


def test_the_vectorised_path_is_taken_where_documented():
    # An insert-only batch of an outer join and an upsert batch of an inner join take it;
    # an outer join's batch with a retraction goes per record.
    taken = []
    original = vector_join.join_batch

    def spy(*args, **kwargs):
        out = original(*args, **kwargs)
        taken.append(out is not None)
        return out

    with mock.patch("changeflow.kernels.join.streaming_join.join_batch", spy):
        full = harness("FULL", None, True, False)
        full.process([left("+I", 1, 1), right("+I", 1, 2), right("+I", None, 3)])
        full.process([left("-D", 1, 1)])
        inner = harness("INNER", None, True, True)
        inner.process([left("+I", 1, 1), right("+I", 1, 2)])
        inner.process([left("-U", 1, 1), left("+U", 1, 3)])
    assert taken == [True, False, True, True]
