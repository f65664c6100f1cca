"""NOT IN (subquery) plans as Flink's null-aware anti join, and CAST's types for BYTES / TIME / MAP (no Spark).

What the plans compute is checked against Flink's goldens on Spark
(conformance/sql_not_in_cases.py, conformance/sql_cast_cases.py); here, the plans' shape and types.
"""

from __future__ import annotations

from changeflow.plan.nodes import Aggregate, Filter, Join


def _nodes(plan, kind):
    found, todo = [], [plan]
    while todo:
        node = todo.pop()
        if isinstance(node, kind):
            found.append(node)
        todo.extend(node.inputs)
    return found


def test_not_in_is_a_mark_join_and_a_counts_join(catalog):
    plan = catalog.plan("SELECT id FROM t WHERE v NOT IN (SELECT w FROM u)")
    joins = _nodes(plan, Join)
    assert [j.join_type for j in joins] == ["LEFT", "LEFT"]
    counts = [a for a in _nodes(plan, Aggregate) if a.calls]
    assert len(counts) == 1 and not counts[0].keys  # uncorrelated: one global count row, joined on no key
    (where,) = [f for f in _nodes(plan, Filter) if "CASE" in str(f.predicate)]
    assert "IS NULL" in str(where.predicate) and "$nn" in str(where.predicate)
    assert plan.field_names == ["id"]


def test_correlated_not_in_counts_per_correlation_key(catalog):
    plan = catalog.plan("SELECT id FROM t WHERE name NOT IN (SELECT region FROM u WHERE u.id = t.id)")
    mark, counts_join = sorted(_nodes(plan, Join), key=lambda j: len(j.left_keys))[::-1]
    assert len(mark.left_keys) == 2 and counts_join.left_keys == ("id",)


def test_in_under_or_keeps_its_two_valued_mark_join(catalog):
    plan = catalog.plan("SELECT id FROM t WHERE v IN (SELECT w FROM u) OR v > 1")
    assert len(_nodes(plan, Join)) == 1


def test_in_under_not_and_is_null_are_three_valued(catalog):
    for sql in ("SELECT id FROM t WHERE NOT (v IN (SELECT w FROM u) OR v > 1)",
                "SELECT id FROM t WHERE (v IN (SELECT w FROM u)) IS NULL"):
        assert len(_nodes(catalog.plan(sql), Join)) == 2, sql


def test_cast_target_types(catalog):
    assert catalog.types("SELECT CAST(name AS BYTES) AS b, CAST(name AS VARBINARY(3)) AS vb, "
                         "CAST(name AS BINARY(2)) AS b2, CAST(name AS VARBINARY) AS vbd, CAST(name AS TIME) AS t0, "
                         "CAST(name AS TIME(3)) AS t3, CAST(CAST(name AS TIME) AS STRING) AS s FROM t") == [
        ("b", "BYTES"), ("vb", "VARBINARY(3)"), ("b2", "BINARY(2)"), ("vbd", "BYTES"), ("t0", "TIME(0)"),
        ("t3", "TIME(3)"), ("s", "STRING")]
