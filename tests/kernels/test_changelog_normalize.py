"""The ChangelogNormalize kernel (changeflow.kernels.normalize) through the public KernelHarness, without Spark.

Its changelog for the bridge conformance cases is checked against Flink 2.3's recorded
output (the same rows, fed as one stream), and a property test checks, over random
upsert sequences in random batches, that the output is a valid retract changelog whose
materialization is the last row per key.
"""

from __future__ import annotations

import json
import os
from types import SimpleNamespace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from changeflow.common import Row, RowKind
from changeflow.kernels.normalize import ChangelogNormalize, changelog_normalize_kernel
from changeflow.kernels.normalize.rowwise import RowwiseChangelogNormalize
from changeflow.testing import KernelHarness, materialize
from conformance import bridge_cases
from conformance.record_flink_bridge import GOLDEN_DIR

_KINDS = {"+I": RowKind.INSERT, "-U": RowKind.UPDATE_BEFORE, "+U": RowKind.UPDATE_AFTER, "-D": RowKind.DELETE}


def _row(kind: RowKind, *values) -> Row:
    row = Row(*values)
    row.set_row_kind(kind)
    return row


def _shown(changes: list[Row]) -> list[tuple]:
    return [(str(c.get_row_kind()), tuple(c)) for c in changes]


class _Collection:
    """What ``env.from_collection`` gets in the bridge cases: here, the rows themselves."""

    @staticmethod
    def from_collection(rows, type_info=None):
        return rows


_API = SimpleNamespace(Row=SimpleNamespace(of_kind=lambda kind, *v: _row(kind, *v)), RowKind=RowKind,
                       Types=SimpleNamespace(ROW_NAMED=lambda *a: None, STRING=lambda: None, INT=lambda: None))


def _golden(name: str) -> list[tuple]:
    with open(os.path.join(GOLDEN_DIR, f"{name}.json")) as f:
        return [(r["kind"], tuple(r["row"])) for r in json.load(f)["records"]]


@pytest.mark.parametrize("batch_size", [1, 3, 100])
def test_an_upsert_stream_normalized_as_flink_does(batch_size):
    rows = bridge_cases._upserts(_Collection, _API)
    harness = KernelHarness(ChangelogNormalize(["name", "score"], ["name"]), ["name", "score"])
    out = [c for i in range(0, len(rows), batch_size) for c in harness.process(rows[i:i + batch_size])]
    assert _shown(out) == _golden("from_changelog_stream_upsert_streaming")


def test_duplicated_cdc_events_normalized_as_flink_does():
    rows = bridge_cases._duplicated_cdc(_Collection, _API)
    harness = KernelHarness(ChangelogNormalize(["name", "score"], ["name"], drop_update_before=True),
                            ["name", "score"])
    assert _shown(harness.process(rows)) == _golden("cdc_events_duplicate_rows_streaming")


def test_without_update_before_an_update_is_a_lone_plus_u():
    harness = KernelHarness(ChangelogNormalize(["k", "v"], ["k"], generate_update_before=False), ["k", "v"])
    out = harness.process([_row(RowKind.INSERT, "a", 1), _row(RowKind.UPDATE_AFTER, "a", 2),
                           _row(RowKind.DELETE, "a", None)])
    assert _shown(out) == [("+I", ("a", 1)), ("+U", ("a", 2)), ("-D", ("a", 2))]


def test_mini_batch_takes_each_keys_last_change_of_the_bundle():
    harness = KernelHarness(ChangelogNormalize(["k", "v"], ["k"], mini_batch=True), ["k", "v"])
    assert _shown(harness.process([_row(RowKind.INSERT, "a", 1), _row(RowKind.INSERT, "b", 1),
                                   _row(RowKind.UPDATE_AFTER, "a", 2), _row(RowKind.DELETE, "b", None)])) == [
        ("+I", ("a", 2))]
    assert _shown(harness.process([_row(RowKind.INSERT, "a", 3), _row(RowKind.INSERT, "a", 2),
                                   _row(RowKind.DELETE, "c", None)])) == []  # the last equals the stored row
    assert _shown(harness.process([_row(RowKind.UPDATE_AFTER, "a", 5), _row(RowKind.DELETE, "a", None)])) == [
        ("-D", ("a", 2))]


def test_with_a_state_ttl_repeats_are_emitted_and_state_expires():
    kernel = changelog_normalize_kernel(["k", "v"], ["k"], ttl_ms=1000)
    harness = KernelHarness(kernel, ["k", "v"], now=0)
    assert _shown(harness.process([_row(RowKind.INSERT, "a", 1), _row(RowKind.INSERT, "a", 1)])) == [
        ("+I", ("a", 1)), ("-U", ("a", 1)), ("+U", ("a", 1))]
    harness.set_time(5000)  # the row expired: the key starts over, and a delete finds nothing
    assert _shown(harness.process([_row(RowKind.DELETE, "a", None), _row(RowKind.INSERT, "a", 2)])) == [
        ("+I", ("a", 2))]


def test_a_restored_kernel_continues_from_its_state():
    harness = KernelHarness(ChangelogNormalize(["k", "v"], ["k"]), ["k", "v"], restart_every_batch=True)
    harness.process([_row(RowKind.INSERT, "a", 1)])
    assert _shown(harness.process([_row(RowKind.DELETE, "a", None)])) == [("-D", ("a", 1))]


_change = st.tuples(st.sampled_from(["+I", "+U", "-D"]), st.sampled_from(["a", "b", "c", "d"]),
                    st.integers(0, 2))


@settings(max_examples=150, deadline=None)
@given(changes=st.lists(_change, max_size=40), cuts=st.lists(st.integers(1, 8), min_size=1, max_size=10),
       mini_batch=st.booleans(), update_before=st.booleans())
def test_materialized_output_is_the_last_row_per_key(changes, cuts, mini_batch, update_before):
    """Random upserts (repeats, deletes of keys without a row) in random batches: the output,
    applied to an empty table, is the last upserted row of every key not deleted since."""
    kernel = ChangelogNormalize(["k", "v"], ["k"], mini_batch=mini_batch, generate_update_before=update_before)
    harness = KernelHarness(kernel, ["k", "v"], dtypes={"k": object, "v": "Int64"}, restart_every_batch=True)
    rows = [_row(_KINDS[kind], k, None if kind == "-D" else v) for kind, k, v in changes]
    out, i, n = [], 0, 0
    while i < len(rows):
        size = cuts[n % len(cuts)]
        out += harness.process(rows[i:i + size])
        i, n = i + size, n + 1
    expected: dict = {}
    for kind, k, v in changes:
        if kind == "-D":
            expected.pop(k, None)
        else:
            expected[k] = v
    if update_before:  # a retract changelog: every -U / -D retracts a row the table holds
        table = [tuple(r) for r in materialize(out)]
    else:  # an upsert changelog by k: apply by key
        state: dict = {}
        for c in out:
            if c.get_row_kind() == RowKind.DELETE:
                assert state.pop(c[0]) == c[1]  # a -D carries the full row
            else:
                state[c[0]] = c[1]
        table = sorted(state.items())
    assert table == sorted(expected.items())


# Values with nulls and repeats, a second value column a string: repeats are dropped by comparing
# every column, nulls equal to nulls only.
_full_change = st.tuples(st.sampled_from(["+I", "-U", "+U", "-D"]), st.sampled_from(["a", "b", "c", "d", None]),
                         st.sampled_from([None, 0, 1, 2]), st.sampled_from([None, "x", "y"]))


def _normalized(kernel, changes, cuts):
    harness = KernelHarness(kernel, ["k", "v", "s"], dtypes={"k": object, "v": "Int64", "s": object}, now=0,
                            restart_every_batch=True)
    rows = [_row(_KINDS[kind], k, v, s) for kind, k, v, s in changes]
    out, i, n = [], 0, 0
    while i < len(rows):
        size = cuts[n % len(cuts)]
        out += harness.process(rows[i:i + size])
        i, n = i + size, n + 1
    return out


@settings(max_examples=200, deadline=None)
@given(changes=st.lists(_full_change, max_size=60), cuts=st.lists(st.integers(1, 12), min_size=1, max_size=10),
       mini_batch=st.booleans(), update_before=st.booleans(), ttl=st.booleans(), drop_update_before=st.booleans())
def test_vectorised_fold_equals_the_row_by_row_reference(changes, cuts, mini_batch, update_before, ttl,
                                                         drop_update_before):
    """Random changelogs (all four kinds, duplicates, retractions of absent keys, null keys and values) in
    random batches, with and without mini-batch and a state TTL (that never expires here): the vectorised
    kernel emits exactly the row-by-row reference's changelog, and its materialization is the batch
    result, the last row of every key not retracted since."""
    options = dict(mini_batch=mini_batch, generate_update_before=update_before,
                   drop_update_before=drop_update_before)
    kernel = changelog_normalize_kernel(["k", "v", "s"], ["k"], ttl_ms=10**9 if ttl else 0, **options)
    reference = RowwiseChangelogNormalize(["k", "v", "s"], ["k"], state_ttl=ttl, **options)
    out = _normalized(kernel, changes, cuts)
    assert _shown(out) == _shown(_normalized(reference, changes, cuts))
    expected: dict = {}
    for kind, k, v, s in changes:
        if kind == "-D" or (kind == "-U" and not drop_update_before):
            expected.pop(k, None)
        elif kind != "-U":
            expected[k] = (v, s)
    if update_before:
        table = sorted((tuple(r) for r in materialize(out)), key=repr)
    else:  # an upsert changelog by k
        state: dict = {}
        for c in out:
            if c.get_row_kind() == RowKind.DELETE:
                assert state.pop(c[0]) == (c[1], c[2])
            else:
                state[c[0]] = (c[1], c[2])
        table = sorted(((k, *vs) for k, vs in state.items()), key=repr)
    assert table == sorted(((k, *vs) for k, vs in expected.items()), key=repr)
