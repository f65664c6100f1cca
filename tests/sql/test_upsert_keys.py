"""Upsert keys of query plans, by Flink 2.3's rules (FlinkRelMdUpsertKeys); they decide the materializer."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from changeflow.plan.rules.upsert_keys import contains_key, upsert_keys
from changeflow.sql import plan_query

sys.path.insert(0, str(Path(__file__).parent))
from test_explain_fixtures import catalog  # noqa: E402

KEYED_T = "(SELECT id, MAX(name) AS name FROM t GROUP BY id)"
KEYED_U = "(SELECT id, MAX(region) AS region FROM u GROUP BY id)"


def keys(sql):
    found = upsert_keys(plan_query(sql, catalog()))
    return None if found is None else sorted(tuple(sorted(k)) for k in found)


@pytest.mark.parametrize("sql, expected", [
    ("SELECT id, name FROM t", None),                                           # a source has none
    ("SELECT name, COUNT(*) FROM t GROUP BY name", [("name",)]),
    ("SELECT COUNT(*) FROM t", [()]),                                           # one row
    ("SELECT name AS n, c FROM (SELECT name, COUNT(*) AS c FROM t GROUP BY name)", [("n",)]),
    ("SELECT UPPER(name), c FROM (SELECT name, COUNT(*) AS c FROM t GROUP BY name)", None),  # computed: lost
    ("SELECT name, c FROM (SELECT name, COUNT(*) AS c FROM t GROUP BY name) WHERE c > 1", [("name",)]),
    ("SELECT id, v FROM (SELECT id, v, ROW_NUMBER() OVER (PARTITION BY id ORDER BY v DESC) AS rn FROM t) "
     "WHERE rn = 1", [("id",)]),
    ("SELECT id, v, rn FROM (SELECT id, v, ROW_NUMBER() OVER (PARTITION BY id ORDER BY v DESC) AS rn FROM t) "
     "WHERE rn <= 3", [("id", "rn")]),
    ("SELECT id, name FROM (SELECT id, name, ROW_NUMBER() OVER (PARTITION BY id ORDER BY name) AS rn "
     f"FROM {KEYED_T}) WHERE rn <= 3", [("id",)]),                               # input key contains partition
    # deduplication over an updating input (one live row per partition key, changes in order): the partition key
    ("SELECT c, name FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY c ORDER BY pt DESC) AS rn FROM "
     "(SELECT name, COUNT(*) AS c, PROCTIME() AS pt FROM t GROUP BY name)) WHERE rn = 1", [("c",)]),
    ("SELECT name, c FROM (SELECT name, COUNT(*) AS c FROM t GROUP BY name) UNION ALL "
     "SELECT region, COUNT(*) FROM u GROUP BY region", None),
])
def test_single_input_rules(sql, expected):
    assert keys(sql) == expected


def test_inner_join_of_inputs_unique_on_the_join_key_keeps_either_sides_key():
    assert keys(f"SELECT a.id, b.id AS id2, name, region FROM {KEYED_T} a JOIN {KEYED_U} b ON a.id = b.id") == [
        ("id",), ("id", "id2"), ("id2",)]


def test_left_join_keeps_only_the_preserved_sides_key():
    # the right side's key could be NULL on padded rows, so only the left key (and the pair) remain
    assert keys(f"SELECT a.id, b.id AS id2 FROM {KEYED_T} a LEFT JOIN {KEYED_U} b ON a.id = b.id") == [
        ("id",), ("id", "id2")]


def test_full_join_keeps_only_the_combined_key():
    assert keys(f"SELECT a.id, b.id AS id2 FROM {KEYED_T} a FULL JOIN {KEYED_U} b ON a.id = b.id") == [
        ("id", "id2")]


def test_a_key_not_containing_the_join_key_is_dropped():
    # t's key is id, but rows are shuffled by name: changes of one id may take two paths
    sql = f"SELECT a.id, b.region FROM {KEYED_T} a JOIN (SELECT region FROM u GROUP BY region) b ON a.name = b.region"
    assert keys(sql) is None


def test_a_key_lies_within_a_primary_key_when_it_is_a_subset():
    assert contains_key([("a", "b"), ("c",)], ("c", "d"))
    assert not contains_key([("a", "b")], ("a",))
    assert contains_key([()], ("x",))
    assert not contains_key(None, ("x",))
