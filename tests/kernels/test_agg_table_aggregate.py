"""The table aggregate kernel (flat_aggregate of a udtaf), without Spark."""

from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from changeflow.common import Row
from changeflow.common.types import DataTypes as T
from changeflow.functions import TableAggregateFunction
from changeflow.kernels.aggregate.table_agg import GroupTableAggregate
from changeflow.kernels.aggregate.user import USER_FUNCTION, UserAggCall
from changeflow.table.udf import udtaf
from changeflow.testing import KernelHarness, delete_record, insert_record, materialize
from tests.kernels.test_group_agg_properties import COLUMNS, DTYPES, changelogs, split


class Top2(TableAggregateFunction):
    def create_accumulator(self):
        return {}

    def accumulate(self, acc, value):
        if value is not None:
            acc[value] = acc.get(value, 0) + 1

    def retract(self, acc, value):
        if value is not None:
            acc[value] -= 1
            if not acc[value]:
                del acc[value]

    def emit_value(self, acc):
        values = sorted((v for v, n in acc.items() for _ in range(n)), reverse=True)
        for rank, v in enumerate(values[:2], start=1):
            yield Row(v, rank)


def top2_call():
    function = udtaf(Top2(), result_type=T.ROW([("v", T.BIGINT()), ("rank", T.BIGINT())]), name="top2").function
    return UserAggCall(USER_FUNCTION, None, None, "t", user=function, args=("x",), arg_types=(T.BIGINT(),))


def run(batches, mini_batch):
    h = KernelHarness(GroupTableAggregate(["k"], top2_call(), mini_batch=mini_batch), COLUMNS, dtypes=DTYPES)
    for b in batches:
        h.process(b)
    return h.changes


def test_each_row_retracts_the_keys_earlier_rows_then_emits_the_new_ones():
    changes = run([[insert_record("a", 5, None, None), insert_record("a", 7, None, None),
                    delete_record("a", 5, None, None), delete_record("a", 7, None, None)]], mini_batch=False)
    assert [(str(r.get_row_kind()), tuple(r)) for r in changes] == [
        ("+I", ("a", 5, 1)),
        ("-D", ("a", 5, 1)), ("+I", ("a", 7, 1)), ("+I", ("a", 5, 2)),
        ("-D", ("a", 7, 1)), ("-D", ("a", 5, 2)), ("+I", ("a", 7, 1)),
        ("-D", ("a", 7, 1)),   # the last row retracted: the key's rows go, nothing new
    ]


def test_mini_batch_retracts_and_emits_once_per_key_and_bundle():
    changes = run([[insert_record("a", 5, None, None), insert_record("a", 7, None, None)],
                   [insert_record("a", 1, None, None), insert_record("b", 2, None, None)]], mini_batch=True)
    assert [(str(r.get_row_kind()), tuple(r)) for r in changes] == [
        ("+I", ("a", 7, 1)), ("+I", ("a", 5, 2)),
        ("-D", ("a", 7, 1)), ("-D", ("a", 5, 2)), ("+I", ("a", 7, 1)), ("+I", ("a", 5, 2)),
        ("+I", ("b", 2, 1)),
    ]


def expected_top2(records):
    rows = {}
    for r in records:
        if r.get_row_kind().is_retraction():
            if rows.get(r[0]):
                rows[r[0]].remove(tuple(r))
        else:
            rows.setdefault(r[0], []).append(tuple(r))
    out = Counter()
    for key, live in rows.items():
        if not live:
            continue
        values = sorted((x for _, x, _, _ in live if x is not None), reverse=True)
        for rank, v in enumerate(values[:2], start=1):
            out[(key, v, rank)] += 1
    return out


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(data=st.data(), mini_batch=st.booleans())
def test_materialized_changelog_is_the_top2_of_the_surviving_rows(data, mini_batch):
    records = data.draw(changelogs())
    batches = data.draw(split(records))
    got = Counter(tuple(r) for r in materialize(run(batches, mini_batch)))
    assert got == +expected_top2(records)


def test_emit_value_with_the_wrong_arity_is_named():
    class Bad(Top2):
        def emit_value(self, acc):
            yield (1, 2, 3)

    function = udtaf(Bad(), result_type=T.ROW([("v", T.BIGINT()), ("rank", T.BIGINT())]), name="bad").function
    call = UserAggCall(USER_FUNCTION, None, None, "t", user=function, args=("x",), arg_types=(T.BIGINT(),))
    h = KernelHarness(GroupTableAggregate(["k"], call, mini_batch=False), COLUMNS, dtypes=DTYPES)
    with pytest.raises(RuntimeError, match=r"table aggregate function bad: emit_value yielded \(1, 2, 3\)"):
        h.process([insert_record("a", 1, None, None)])
