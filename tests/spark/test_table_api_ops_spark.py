"""The rest of the Table API on Spark: order_by/offset/fetch/limit in both modes, column
operations, expression functions, execute_insert and statement sets (several sinks, one job)."""

from __future__ import annotations

import pytest

from changeflow.common import DataTypes
from changeflow.plan.type_inference import PlanError
from changeflow.table.expressions import (coalesce, col, concat, concat_ws, if_then_else, lit, null_of,
                                          with_columns, without_columns, range_)

pytestmark = pytest.mark.spark

ROWS = [(1, "a", 5), (2, "b", 3), (3, None, 9), (4, "d", 1), (5, "e", 7)]


def _table(t_env):
    return t_env.from_elements(ROWS, ["id", "name", "v"])


def _rows(table):
    with table.execute().collect() as results:
        return [(str(r.get_row_kind()), tuple(r)) for r in results]


def _final(changes):
    """The rows the changelog leaves (a multiset, as sorted tuples)."""
    live: list = []
    for kind, values in changes:
        if kind in ("-U", "-D"):
            live.remove(values)
        else:
            live.append(values)
    return sorted(live, key=repr)


def test_batch_order_by_sorts_and_offset_fetch_slice(batch_env):
    t = _table(batch_env)
    assert [v for _, v in _rows(t.order_by(col("v").desc))] == [
        (3, None, 9), (5, "e", 7), (1, "a", 5), (2, "b", 3), (4, "d", 1)]
    assert [v[0] for _, v in _rows(t.order_by(t.v).offset(1).fetch(2))] == [2, 1]
    assert [v[0] for _, v in _rows(t.order_by(col("name")).limit(2, 3))] == [5, 3]   # NULL last for ASC
    assert [v[0] for _, v in _rows(t.order_by(col("name").desc).limit(2))] == [3, 5]  # NULL first for DESC
    assert [v[0] for _, v in _rows(t.order_by((col("v") % 4).asc, col("id").desc).select(col("id")))] == \
        [4, 3, 1, 5, 2]


def test_streaming_order_by_with_fetch_is_a_top_n(stream_env):
    changes = _rows(_table(stream_env).order_by(col("v").desc).fetch(2))
    assert changes[0] == ("+I", (1, "a", 5))
    assert _final(changes) == [(3, None, 9), (5, "e", 7)]
    assert any(kind == "-D" for kind, _ in changes)  # rows leave the top 2


def test_streaming_order_by_without_fetch_is_refused_as_flink(stream_env):
    with pytest.raises(PlanError, match="Sort on a non-time-attribute field is not supported"):
        _rows(_table(stream_env).order_by(col("v")))


def test_streaming_limit_without_order_keeps_the_first_rows(stream_env):
    assert _final(_rows(_table(stream_env).limit(2))) == [(1, "a", 5), (2, "b", 3)]


def test_column_operations_both_modes(stream_env, batch_env):
    for t_env in (stream_env, batch_env):
        t = _table(t_env).where(col("id") == 1)
        assert _rows(t.drop_columns(t.name)) == [("+I", (1, 5))]
        renamed = t.rename_columns(col("v").alias("value"))
        assert renamed.get_schema().get_field_names() == ["id", "name", "value"]
        replaced = t.add_or_replace_columns(concat(col("name"), "!").alias("name"), (col("v") * 2).alias("w"))
        assert _rows(replaced) == [("+I", (1, "a!", 5, 10))]
        assert _rows(t.select(col("*"))) == [("+I", (1, "a", 5))]
        assert _rows(t.select(with_columns(range_(2, 3)))) == [("+I", ("a", 5))]
        assert _rows(t.select(without_columns(col("id")))) == [("+I", ("a", 5))]
        assert _rows(t.select(t.id, t["v"])) == [("+I", (1, 5))]


def test_expression_functions_compile(batch_env):
    t = _table(batch_env).where(col("id") <= 3)
    out = t.select(
        concat_ws("-", col("name"), "x").alias("cw"),
        coalesce(col("name"), "none").alias("co"),
        if_then_else(col("v") > 4, "big", "small").alias("ite"),
        col("name").upper_case.alias("up"),
        col("name").char_length.alias("len"),
        col("v").between(3, 5).alias("btw"),
        col("id").in_(1, 3).alias("isin"),
        col("name").like("a%").alias("lk"),
        (col("v") ** 2).alias("pw"),
        col("name").if_null("?").alias("inull"),
        (col("v") > 4).then(1, 0).alias("th"),
        null_of(DataTypes.INT()).alias("nul"),
        col("name").substring(1, 1).alias("sub"),
        col("name").trim().alias("tr"),
        lit("2024-01-02").to_date.alias("d"))
    rows = [v for _, v in _rows(out)]
    import datetime
    assert rows[0] == ("a-x", "a", "big", "A", 1, True, True, True, 25.0, "a", 1, None, "a", "a",
                       datetime.date(2024, 1, 2))
    assert rows[2][:4] == ("x", "none", "big", None)


def _sinks(t_env, *names):
    for name in names:
        t_env.execute_sql(f"CREATE TABLE {name} (id BIGINT, name STRING) WITH ('connector' = 'materialized')")


@pytest.mark.parametrize("mode", ["streaming", "batch"])
def test_statement_set_writes_two_sinks_in_one_job(mode, stream_env, batch_env):
    t_env = stream_env if mode == "streaming" else batch_env
    _sinks(t_env, "low", "high")
    t = _table(t_env).select(col("id"), col("name"))
    statement_set = t_env.create_statement_set()
    statement_set.add_insert("low", t.where(col("id") <= 2))
    t_env.create_temporary_view("src", t)
    statement_set.add_insert_sql("INSERT INTO high SELECT id, name FROM src WHERE id > 3")
    assert "low" in statement_set.explain() and "high" in statement_set.explain()
    statement_set.execute().wait()
    assert sorted(_rows(t_env.from_path("low"))) == [("+I", (1, "a")), ("+I", (2, "b"))]
    assert sorted(_rows(t_env.from_path("high"))) == [("+I", (4, "d")), ("+I", (5, "e"))]


def test_statement_set_with_a_not_null_column_in_one_sink(stream_env):
    # One job's rows carry every sink's columns, the other sinks' NULL: a sink's column that
    # Spark knows is never NULL (a literal) must not make the other sinks' rows invalid (Arrow
    # refused them: "nulls in input cannot be viewed as non-nullable").
    _sinks(stream_env, "names")
    stream_env.execute_sql("CREATE TABLE tags (id BIGINT, tag STRING NOT NULL) WITH ('connector' = 'materialized')")
    stream_env.create_temporary_view("src3", _table(stream_env).select(col("id"), col("name")))
    statement_set = stream_env.create_statement_set()
    statement_set.add_insert_sql("INSERT INTO tags SELECT id, 'low' FROM src3 WHERE id <= 2")
    statement_set.add_insert_sql("INSERT INTO names SELECT id, name FROM src3 WHERE id = 5")
    statement_set.execute().wait()
    assert sorted(_rows(stream_env.from_path("tags"))) == [("+I", (1, "low")), ("+I", (2, "low"))]
    assert _rows(stream_env.from_path("names")) == [("+I", (5, "e"))]


def test_execute_statement_set_sql_and_execute_insert(stream_env):
    _sinks(stream_env, "s1", "s2", "s3")
    stream_env.create_temporary_view("src2", _table(stream_env).select(col("id"), col("name")))
    stream_env.execute_sql("EXECUTE STATEMENT SET BEGIN INSERT INTO s1 SELECT * FROM src2 WHERE id = 1; "
                           "INSERT INTO s2 SELECT * FROM src2 WHERE id = 2; END;").wait()
    assert _rows(stream_env.from_path("s1")) == [("+I", (1, "a"))]
    assert _rows(stream_env.from_path("s2")) == [("+I", (2, "b"))]
    stream_env.from_path("src2").where(col("id") == 5).execute_insert("s3").wait()
    assert _rows(stream_env.from_path("s3")) == [("+I", (5, "e"))]
