"""The split distinct aggregation (plan/rules/split_distinct.py) computes what the unsplit one does.

The property test runs both plans on the kernels, without Spark: a small
interpreter evaluates the plan's Calcs row by row and runs each group
aggregation on the GroupAggregate kernel (KernelHarness), feeding every
operator, batch by batch, the changes its input emitted for that batch, as the
streaming runtime's micro-batches do. Random input with retractions; the
materialized changelogs of the split and the unsplit plan must be equal, and
equal to the aggregate computed directly over the final table (the batch result).
"""

from __future__ import annotations

import zlib
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from changeflow.common import Configuration
from changeflow.common.types import DataTypes as T
from changeflow.config.flink_keys import no_effect_keys
from changeflow.expressions import Call, Column, Expression, Literal
from changeflow.kernels.aggregate import GroupAggregate
from changeflow.plan.explain import ExplainSettings, explain
from changeflow.plan.nodes import Aggregate, PlanNode, Project, Source, Union
from changeflow.plan.optimizer import PlannerSettings, optimize
from changeflow.plan.rules.split_distinct import split, why_not_split
from changeflow.sql import plan_query
from changeflow.testing import KernelHarness, delete_record, insert_record, materialize
from changeflow.testing.changelog import update_after_record, update_before_record

SRC = Source("s", (("k", T.STRING()), ("x", T.BIGINT()), ("v", T.INT())), "elements", [])
QUERIES = [
    "SELECT k, COUNT(DISTINCT x) AS c, SUM(DISTINCT x) AS sd, SUM(v) AS s, AVG(v) AS a, MIN(x) AS lo, "
    "MAX(v) AS hi, COUNT(*) AS n, COUNT(v) AS cv FROM s GROUP BY k",
    "SELECT COUNT(DISTINCT x) AS c, AVG(DISTINCT x) AS a, MAX(x) AS m FROM s",
    # DISTINCT over two columns: one copy of each row per group set (plan/distinct_expand.py)
    "SELECT k, COUNT(DISTINCT x) AS c, COUNT(DISTINCT v) AS cv, SUM(DISTINCT v) AS sv, AVG(v) AS a, "
    "MIN(x) AS lo, COUNT(*) AS n FROM s GROUP BY k",
    "SELECT COUNT(DISTINCT x) AS c, MAX(DISTINCT v) AS m, COUNT(*) AS n, SUM(x) AS s FROM s",
]


def logical(sql: str) -> PlanNode:
    return plan_query(sql, lambda name: SRC)


def _java_mod(a, b):
    return None if a is None or b is None else a - b * int(a / b)


def evaluate(expr: Expression, row: dict):
    """The few expressions the rule writes (and the front end's column references), row by row."""
    if isinstance(expr, Column):
        return row[expr.name]
    if isinstance(expr, Literal):
        return expr.value
    assert isinstance(expr, Call), expr
    args = [evaluate(a, row) for a in expr.args[:1]] if expr.function == "cast" else \
        [evaluate(a, row) for a in expr.args]
    if expr.function == "hash_code":  # any deterministic hash: it only chooses the bucket
        return zlib.crc32(repr(args[0]).encode()) - 2**31
    if expr.function == "%":
        return _java_mod(*args)
    if expr.function == "/":
        return None if None in args else int(args[0] / args[1])  # Java's truncating long division
    if expr.function == "nullif":
        return None if args[0] == args[1] else args[0]
    if expr.function == "cast":
        return args[0]  # integral to integral, within range
    raise AssertionError(f"no evaluation for {expr}")


def _dtype(t) -> object:
    return "Int64" if t.is_integral else object


def run(plan: PlanNode, batches: list[list], *, mini_batch: bool) -> list:
    """The changelog ``plan`` emits for the source changes in ``batches`` (one list per micro-batch)."""
    harnesses: dict[int, KernelHarness] = {}

    def step(node: PlanNode, batch: list) -> list:
        if isinstance(node, Source):
            return batch
        if isinstance(node, Union):  # the copies of split_distinct_expand.py, one input after the other
            return [change for child in node.inputs for change in step(child, batch)]
        child = step(node.inputs[0], batch)
        if isinstance(node, Project):
            names = node.input.field_names
            out = []
            for change in child:
                row = dict(zip(names, change, strict=True))
                values = [evaluate(e, row) for _, e in node.exprs]
                out.append(type(change).of(change.get_row_kind(), values))
            return out
        assert isinstance(node, Aggregate), node
        if id(node) not in harnesses:
            # The source here retracts (the planner takes an elements source as insert-only).
            kernel = GroupAggregate(list(node.keys), list(node.calls), mini_batch=mini_batch,
                                    input_insert_only=False)
            harnesses[id(node)] = KernelHarness(kernel, node.input.field_names,
                                                dtypes={n: _dtype(t) for n, t in node.input.schema})
        return harnesses[id(node)].process(child) if child else []

    out: list = []
    for batch in batches:
        out.extend(step(plan, batch))
    return out


def direct(sql_index: int, table: list[tuple]) -> list[tuple]:
    """The batch result of QUERIES[sql_index] over the final table, computed in Python."""
    def aggregates(rows):
        xs = [r[1] for r in rows]
        vs = [r[2] for r in rows if r[2] is not None]
        distinct = sorted(set(x for x in xs if x is not None))
        vs_distinct = sorted(set(vs))
        if sql_index == 2:
            return (len(distinct), len(vs_distinct), sum(vs_distinct) if vs_distinct else None,
                    int(sum(vs) / len(vs)) if vs else None, min(distinct) if distinct else None, len(rows))
        if sql_index == 3:
            return (len(distinct), max(vs_distinct) if vs_distinct else None, len(rows),
                    sum(x for x in xs if x is not None) if distinct else None)
        if sql_index == 0:
            return (len(distinct), sum(distinct) if distinct else None, sum(vs) if vs else None,
                    int(sum(vs) / len(vs)) if vs else None, min(distinct) if distinct else None,
                    max(vs) if vs else None, len(rows), len(vs))
        return (len(distinct), int(sum(distinct) / len(distinct)) if distinct else None,
                max(distinct) if distinct else None)

    if sql_index in (1, 3):
        return [aggregates(table)] if table else []
    groups: dict = {}
    for r in table:
        groups.setdefault(r[0], []).append(r)
    return sorted((k,) + aggregates(rows) for k, rows in groups.items())


@st.composite
def changelogs(draw):
    """Micro-batches of source changes: inserts, deletes and updates of rows inserted before."""
    live: list[tuple] = []
    batches = []
    for _ in range(draw(st.integers(1, 5))):
        batch = []
        for _ in range(draw(st.integers(1, 8))):
            action = draw(st.sampled_from(["insert", "insert", "delete", "update"]))
            if action == "insert" or not live:
                row = (draw(st.sampled_from(["a", "b", "c"])), draw(st.one_of(st.none(), st.integers(-3, 6))),
                       draw(st.one_of(st.none(), st.integers(-5, 9))))
                live.append(row)
                batch.append(insert_record(*row))
                continue
            old = live.pop(draw(st.integers(0, len(live) - 1)))
            if action == "delete":
                batch.append(delete_record(*old))
            else:
                new = (old[0], draw(st.integers(-3, 6)), old[2])
                live.append(new)
                batch += [update_before_record(*old), update_after_record(*new)]
        batches.append(batch)
    return batches, live


@pytest.mark.parametrize("mini_batch", [False, True])
@pytest.mark.parametrize("index", [0, 1, 2, 3])
@settings(max_examples=40, deadline=None)
@given(data=changelogs(), buckets=st.sampled_from([1, 3, 1024]))
def test_the_split_plan_materializes_to_the_unsplit_and_the_batch_result(index, mini_batch, data, buckets):
    batches, final_table = data
    base = PlannerSettings(mini_batch=mini_batch)
    unsplit = optimize(logical(QUERIES[index]), base)
    chosen = optimize(logical(QUERIES[index]), PlannerSettings(mini_batch=mini_batch, distinct_agg_split=True,
                                                              distinct_agg_split_buckets=buckets))
    assert sum(isinstance(n, Aggregate) for n in _nodes(chosen)) == 2  # it did split
    expected = direct(index, final_table)
    assert [tuple(r) for r in materialize(run(unsplit, batches, mini_batch=mini_batch))] == expected
    assert [tuple(r) for r in materialize(run(chosen, batches, mini_batch=mini_batch))] == expected


def _nodes(plan: PlanNode) -> list[PlanNode]:
    return [plan] + [n for c in plan.inputs for n in _nodes(c)]


def test_the_split_keeps_the_schema_and_puts_the_distinct_value_in_a_bucket():
    agg = next(n for n in _nodes(logical(QUERIES[0])) if isinstance(n, Aggregate))
    assert why_not_split(agg) is None
    result = split(agg, 7)
    assert result.schema == agg.schema
    text = explain(optimize(logical(QUERIES[0]), PlannerSettings(distinct_agg_split=True,
                                                                 distinct_agg_split_buckets=7)))
    assert "GroupAggregate(groupBy=[k], partialFinalType=[FINAL], select=[k, SUM0($f2) AS c, SUM($f5) AS sd" in text
    assert "GroupAggregate(groupBy=[k, $f3], partialFinalType=[PARTIAL], select=[k, $f3, COUNT(DISTINCT x)" in text
    assert "(HASH_CODE(x) % 7) AS $f3" in text


def test_explain_settings_carry_the_key():
    text = explain(logical(QUERIES[1]), ExplainSettings(distinct_agg_split=True))
    assert "partialFinalType=[PARTIAL]" in text and "partialFinalType=[FINAL]" in text
    assert "partialFinalType" not in explain(logical(QUERIES[1]), ExplainSettings())


def test_a_bucket_number_below_one_is_refused_naming_the_key():
    with pytest.raises(ValueError, match="table.optimizer.distinct-agg.split.bucket-num must be positive, got 0"):
        optimize(logical(QUERIES[1]), PlannerSettings(distinct_agg_split=True, distinct_agg_split_buckets=0))


def test_the_direct_result_counts_each_distinct_value_once():  # the reference itself, on a known table
    table = [("a", 1, 2), ("a", 1, None), ("a", None, 4), ("b", 3, 5)]
    assert direct(0, table) == [("a", 1, 1, 6, 3, 1, 4, 3, 2), ("b", 1, 3, 5, 5, 3, 5, 1, 1)]
    assert Counter(r[0] for r in table) == {"a": 3, "b": 1}


def test_the_keys_are_options_that_take_effect_and_a_bad_bucket_number_is_refused():
    assert no_effect_keys(["table.optimizer.distinct-agg.split.enabled",
                           "table.optimizer.distinct-agg.split.bucket-num"]) == []
    conf = Configuration().set("table.optimizer.distinct-agg.split.enabled", "true")
    assert conf.get("table.optimizer.distinct-agg.split.enabled") is True
    assert conf.get("table.optimizer.distinct-agg.split.bucket-num") == 1024
    with pytest.raises(ValueError, match="table.optimizer.distinct-agg.split.bucket-num"):
        Configuration().set("table.optimizer.distinct-agg.split.bucket-num", "0")
