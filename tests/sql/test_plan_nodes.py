"""The plan nodes SQL queries become: joins, unions, deduplication and Top-N (no Spark needed)."""

from __future__ import annotations

import pytest

from changeflow.plan.nodes import Aggregate, Deduplicate, Filter, Join, Project, Rank, Union
from changeflow.sql import SqlError


def below(plan, node_type):
    while not isinstance(plan, node_type):
        plan = plan.inputs[0]
    return plan


@pytest.mark.parametrize("sql, join_type", [
    ("SELECT * FROM t JOIN u ON t.id = u.id", "INNER"), ("SELECT * FROM t INNER JOIN u ON t.id = u.id", "INNER"),
    ("SELECT * FROM t LEFT JOIN u ON t.id = u.id", "LEFT"),
    ("SELECT * FROM t LEFT OUTER JOIN u ON t.id = u.id", "LEFT"),
    ("SELECT * FROM t RIGHT JOIN u ON u.id = t.id", "RIGHT"),
    ("SELECT * FROM t FULL OUTER JOIN u ON t.id = u.id", "FULL"),
])
def test_join_types_and_equi_keys(catalog, sql, join_type):
    join = catalog.plan(sql)
    assert isinstance(join, Join)
    assert (join.join_type, join.left_keys, join.right_keys, join.condition) == (join_type, ("id",), ("id",), None)


def test_on_splits_into_key_pairs_and_a_condition_over_output_names(catalog):
    join = below(catalog.plan("SELECT t.id, region FROM t LEFT JOIN u ON t.id = u.id AND v > w AND u.id > 0"), Join)
    assert (join.left_keys, join.right_keys) == (("id",), ("id",))
    assert str(join.condition) == "((v > w) AND (id0 > 0))"


def test_outer_side_becomes_nullable(catalog):
    left = catalog.plan("SELECT * FROM tp LEFT JOIN up ON tp.id = up.id")
    types = dict(left.schema)
    assert not types["pt"].nullable and types["pt0"].nullable and types["region"].nullable
    full = dict(catalog.plan("SELECT * FROM tp FULL JOIN up ON tp.id = up.id").schema)
    assert full["pt"].nullable and full["pt0"].nullable


def test_comma_join_takes_keys_from_where_and_keeps_the_rest_as_a_filter(catalog):
    plan = catalog.plan("SELECT * FROM t, u WHERE t.id = u.id AND v > 1")
    assert isinstance(plan, Filter) and str(plan.predicate) == "(v > 1)"
    assert (plan.input.left_keys, plan.input.right_keys) == (("id",), ("id",))


def test_three_way_join_chains_left_to_right(catalog):
    plan = catalog.plan("SELECT t.name, u.region, s.day FROM t JOIN u ON t.id = u.id "
                        "JOIN src AS s ON s.user_id = t.v")
    outer = below(plan, Join)
    assert isinstance(outer.left, Join) and (outer.left_keys, outer.right_keys) == (("v",), ("user_id",))
    assert plan.field_names == ["name", "region", "day"]


def test_join_with_only_a_non_equi_condition_has_no_keys(catalog):
    join = catalog.plan("SELECT * FROM t JOIN u ON t.v < u.w")
    assert (join.left_keys, join.right_keys, str(join.condition)) == ((), (), "(v < w)")


def test_union_all_of_three_is_one_node(catalog):
    plan = catalog.plan("SELECT id FROM t UNION ALL SELECT id FROM u UNION ALL SELECT CAST(user_id AS BIGINT) FROM src")
    assert isinstance(plan, Union) and len(plan.inputs) == 3


def test_deduplicate_keep_first_and_last_on_proctime(catalog):
    last = catalog.plan("SELECT id, name FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY name ORDER BY pt DESC) "
                        "AS rn FROM tp) WHERE rn = 1")
    dedup = below(last, Deduplicate)
    assert (dedup.keys, dedup.keep_last, dedup.order) == (("name",), True, "proctime")
    first = below(catalog.plan("SELECT id, name FROM (SELECT id, name, pt, ROW_NUMBER() OVER (PARTITION BY id, name "
                               "ORDER BY pt) AS r FROM tp) WHERE r <= 1"), Deduplicate)
    assert (first.keys, first.keep_last) == (("id", "name"), False)


def test_deduplicate_over_an_updating_input_retracts_and_runs_the_retracting_kernel(catalog):
    from changeflow.kernels.rank import InsertOnlyDeduplicate as InsertOnlyKernel
    from changeflow.kernels.rank import RetractingDeduplicate, deduplicate_kernel
    from changeflow.plan.rules.changelog_mode import RETRACT, infer

    plan = catalog.plan("SELECT s, name FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY s ORDER BY pt DESC) AS rn "
                        "FROM (SELECT name, SUM(v) AS s, PROCTIME() AS pt FROM t GROUP BY name)) WHERE rn = 1")
    dedup = below(plan, Deduplicate)
    modes = infer(plan)
    assert not modes[id(dedup.input)].insert_only and modes[id(dedup)] == RETRACT

    def kernel(node):
        return deduplicate_kernel(node.field_names, list(node.keys), keep_last=node.keep_last, mini_batch=False,
                                  input_insert_only=infer(node)[id(node.input)].insert_only)

    assert type(kernel(dedup)) is RetractingDeduplicate
    insert_only = below(catalog.plan("SELECT id, name FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY name "
                                     "ORDER BY pt DESC) AS rn FROM tp) WHERE rn = 1"), Deduplicate)
    assert type(kernel(insert_only)) is InsertOnlyKernel


def test_row_number_on_a_non_time_column_is_a_rank(catalog):
    rank = catalog.plan("SELECT id, name, v FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY name ORDER BY v DESC, "
                        "id) AS rn FROM t) WHERE rn <= 3")
    rank = below(rank, Rank)
    assert (rank.partition_keys, rank.order_by) == (("name",), (("v", False, False), ("id", True, True)))
    assert (rank.rank_start, rank.rank_end, rank.rank_column) == (1, 3, None)


@pytest.mark.parametrize("condition, start, end", [
    ("rn <= 3", 1, 3), ("rn < 3", 1, 2), ("rn = 2", 2, 2), ("rn BETWEEN 2 AND 4", 2, 4), ("3 >= rn", 1, 3),
    ("rn <= 5 AND rn > 1", 2, 5),
])
def test_rank_ranges(catalog, condition, start, end):
    rank = below(catalog.plan("SELECT id FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY name ORDER BY v) AS rn "
                              f"FROM t) WHERE {condition}"), Rank)
    assert (rank.rank_start, rank.rank_end) == (start, end)


def test_rank_column_is_set_iff_the_outer_query_selects_it(catalog):
    selected = catalog.plan("SELECT name, rn FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY name ORDER BY v) AS rn "
                            "FROM t) WHERE rn <= 2")
    assert below(selected, Rank).rank_column == "rn"
    assert selected.schema[1][0] == "rn" and str(selected.schema[1][1]) == "BIGINT NOT NULL"
    # rn = 1 on proctime but selected: Flink keeps a Rank (a Deduplicate has no row number)
    star = catalog.plan("SELECT * FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY name ORDER BY pt) AS rn FROM tp) "
                        "WHERE rn = 1")
    assert isinstance(star, Rank) and star.rank_column == "rn"


def test_top_n_over_an_aggregate(catalog):
    plan = catalog.plan("SELECT name, s FROM (SELECT name, s, ROW_NUMBER() OVER (PARTITION BY name ORDER BY s DESC) "
                        "AS rn FROM (SELECT name, id, SUM(v) AS s FROM t GROUP BY name, id)) WHERE rn <= 2")
    assert isinstance(below(plan, Rank).input.inputs[0], Aggregate)


def test_window_columns_must_be_selected_by_the_subquery(catalog):
    with pytest.raises(SqlError, match=r"PARTITION BY of ROW_NUMBER\(\) must be a column the subquery selects"):
        catalog.plan("SELECT id FROM (SELECT id, ROW_NUMBER() OVER (PARTITION BY name ORDER BY v) AS rn FROM t) "
                     "WHERE rn = 1")


def test_select_distinct_and_group_by_plan_through_the_builder(catalog):
    plan = catalog.plan("SELECT DISTINCT name FROM t")
    assert isinstance(plan, Aggregate) and plan.keys == ("name",) and plan.calls == ()
    having = catalog.plan("SELECT name, SUM(v) AS s FROM t GROUP BY name HAVING SUM(v) > 10")
    agg = below(having, Aggregate)
    assert [c.output for c in agg.calls] == ["s"]  # SUM(v) is computed once for select and HAVING
    assert isinstance(below(having, Filter), Filter)


def test_subquery_alias_qualifies_its_columns(catalog):
    plan = catalog.plan("SELECT x.n FROM (SELECT name AS n FROM t) AS x WHERE x.n <> 'a'")
    assert plan.field_names == ["n"]
    assert isinstance(below(plan, Project), Project)


def test_with_clause(catalog):
    plan = catalog.plan("WITH big AS (SELECT * FROM t WHERE v > 10) SELECT name, COUNT(*) AS c FROM big GROUP BY name")
    assert plan.field_names == ["name", "c"]
