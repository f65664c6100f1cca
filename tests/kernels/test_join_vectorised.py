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


def harness(join_type: str, condition, vectorised: bool, upsert: bool, values: str = "object") -> KernelHarness:
    """The join of (k, v) and (k0, v0); ``values`` the dtype of v and v0 (in the input and in the kernel)."""
    kernel = StreamingJoin(join_type, ["k", "v"], ["k0", "v0"], ["k"], ["k0"], condition,
                           key_dtypes=["Int64"],
                           dtypes={c: values if c in ("v", "v0") else "Int64" for c in COLUMNS[1:]},
                           left_unique_key=["k"] if upsert else None, vectorised=vectorised,
                           vector_min_rows=0)
    return KernelHarness(kernel, COLUMNS, dtypes={"_side": "int8", "k": "Int64", "k0": "Int64",
                                                   "v": values, "v0": values})


def changelogs(upsert: bool):
    """Batches of (side, kind, k, v): insert-only, or the left side an upsert stream of its key k."""
    return join_changelogs(unique_left=upsert, retract=False, insert_kinds=("+I",) if upsert else ("+I", "+U"),
                           max_batches=5, max_rows=10)


def stamp(v):
    """A drawn value as a TIMESTAMP's value (a Timestamp; None stays NULL)."""
    return None if v is None else pd.Timestamp(1_700_000_000_000 + 1000 * v, unit="ms")


def check(join_type, condition_name, log, upsert, values="object"):
    batches, (lefts, rights) = log
    value = stamp if values.startswith("datetime64") else (lambda v: v)
    lefts, rights = [(k, value(v)) for k, v in lefts], [(k, value(v)) for k, v in rights]
    condition = CONDITIONS[condition_name]
    fast, slow = (harness(join_type, condition, True, upsert, values),
                  harness(join_type, condition, False, upsert, values))
    for batch in batches:
        records = [left(kind, k, value(v)) if side == 0 else right(kind, k, value(v)) for side, kind, k, v in batch]
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
    # a datetime64 column's NULL is NaT
    rows = [tuple(None if x is pd.NaT else x for x in r) for r in materialize(fast.changes)]
    assert sorted(rows, key=repr) == reference_join(join_type, condition, lefts, rights)


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


@settings(max_examples=100, deadline=None)
@given(data=st.data(), join_type=st.sampled_from(["INNER", "LEFT", "RIGHT", "FULL"]),
       condition=st.sampled_from(["none", "v<=v0"]), upsert=st.booleans())
def test_datetime64_columns_vectorised_equals_per_record_and_batch(data, join_type, condition, upsert):
    # TIMESTAMP columns reach the join as datetime64[ns] (StreamingJoin.datetime_columns): the vectorised
    # path takes them as arrays, the per-record path through Python values; both emit datetime64 columns.
    check(join_type, condition, data.draw(changelogs(upsert=upsert)), upsert, values="datetime64[ns]")


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
