"""Planning of table functions: Table.join_lateral / left_outer_join_lateral / flat_map / map and SQL
LATERAL TABLE: schemas, EXPLAIN, changelog modes and the errors (no Spark)."""

from __future__ import annotations

import pytest

from changeflow.common import DataTypes, Row
from changeflow.plan.correlate import Correlate
from changeflow.plan.type_inference import PlanError
from changeflow.sql.errors import SqlError
from changeflow.table import EnvironmentSettings, TableEnvironment
from changeflow.table.expressions import col, lit
from changeflow.table.udf import udaf, udf, udtf


@pytest.fixture
def t_env():
    return TableEnvironment.create(EnvironmentSettings.in_streaming_mode())


@pytest.fixture
def lines(t_env):
    t = t_env.from_elements([(1, "a b")], ["id", "line"])
    t_env.create_temporary_view("lines", t)
    return t


split = udtf(lambda s: s.split(), result_types=[DataTypes.STRING(), DataTypes.INT()], name="split")
pair = udf(lambda r: Row(r.id, r.line), name="pair",
           result_type=DataTypes.ROW([DataTypes.FIELD("x", DataTypes.BIGINT()),
                                      DataTypes.FIELD("y", DataTypes.STRING())]))


def _schema(table):
    return [(n, str(t)) for n, t in zip(table.get_schema().get_field_names(), table.get_schema().get_field_data_types(),
                                        strict=True)]


def test_join_lateral_schemas(lines):
    assert _schema(lines.join_lateral(split(col("line")).alias("w", "n"))) == [
        ("id", "BIGINT"), ("line", "STRING"), ("w", "STRING"), ("n", "INT")]
    # LEFT: the function's columns become nullable; without an alias they keep the result type's names.
    left = lines.left_outer_join_lateral(udtf(lambda s: [s], result_types=[DataTypes.STRING(False)])(col("line")))
    assert _schema(left)[-1] == ("f0", "STRING")


def test_the_function_itself_takes_the_row_and_needs_an_alias_in_a_lateral_join(lines):
    wrapper = udtf(lambda row: [row.line], result_types=[DataTypes.STRING()], name="whole")
    with pytest.raises(AttributeError, match="must be followed by a alias function"):
        lines.join_lateral(wrapper)
    joined = lines.join_lateral(wrapper.alias("copy"))
    node = joined.plan
    assert isinstance(node, Correlate) and node.takes_row and [str(a) for a in node.call.args] == ["id", "line"]
    assert not wrapper.function.takes_row  # the wrapper's function is unchanged: it may still be called by columns


def test_flat_map_and_map_keep_only_the_function_columns(lines):
    assert lines.flat_map(split(col("line"))).get_schema().get_field_names() == ["f0", "f1"]
    assert lines.flat_map(split(col("line")).alias("a", "b")).get_schema().get_field_names() == ["a", "b"]
    assert _schema(lines.map(pair)) == [("x", "BIGINT"), ("y", "STRING")]
    assert lines.map(pair(col("id"))).alias("p", "q").get_schema().get_field_names() == ["p", "q"]


def test_join_predicates_follow_flink(lines):
    call = split(col("line")).alias("w", "n")
    assert lines.join_lateral(call, col("n") == col("id")).get_schema().get_field_names()[-1] == "n"
    with pytest.raises(PlanError, match=r"Invalid join condition: \(n > 2\). At least one equi-join predicate"):
        lines.join_lateral(call, col("n") > 2)
    with pytest.raises(PlanError, match="can only be empty or literal true"):
        lines.left_outer_join_lateral(call, col("n") == col("id"))
    assert lines.left_outer_join_lateral(call, lit(True)).get_schema().get_field_names()[-1] == "n"


def test_wrong_function_kinds_and_names_are_refused(lines):
    with pytest.raises(PlanError, match="flat_map takes a table function; pair is a scalar function"):
        lines.flat_map(pair)
    with pytest.raises(PlanError, match="map takes a scalar function; split is a table function"):
        lines.map(split)
    with pytest.raises(TypeError, match="join_lateral takes a call of a Python table function"):
        lines.join_lateral(col("line"))
    with pytest.raises(PlanError, match=r"split emits 2 columns \(f0, f1\) but 1 names were given: w"):
        lines.join_lateral(split(col("line")).alias("w"))
    with pytest.raises(PlanError, match="ambiguous column name 'id'"):
        lines.join_lateral(split(col("line")).alias("id", "n"))


def test_explain_shows_the_correlate_and_it_keeps_an_updating_input_mode(t_env, lines):
    sums = lines.group_by(col("line")).select(col("line"), col("id").sum.alias("s"))
    text = sums.join_lateral(split(col("line")).alias("w", "n")).explain()
    assert ("PythonCorrelate(invocation=[split($0)], correlate=[table(split(line))], select=[line,s,w,n], "
            "rowType=[RecordType(STRING line, BIGINT s, STRING w, INT n)], joinType=[INNER], "
            "changelogMode=[I,UB,UA])") in text


def test_sql_lateral_table_forms(t_env, lines):
    t_env._planning.catalog.functions.create("tokens", split.function, system=False)
    comma = t_env.sql_query("SELECT * FROM lines, LATERAL TABLE(tokens(line))")
    assert comma.get_schema().get_field_names() == ["id", "line", "f0", "f1"]
    aliased = t_env.sql_query("SELECT * FROM lines CROSS JOIN LATERAL TABLE(tokens(line)) AS T(w, id)")
    assert aliased.get_schema().get_field_names() == ["id", "line", "w", "id0"]  # Calcite's renaming
    assert t_env.sql_query("SELECT T.id, lines.id FROM lines CROSS JOIN LATERAL TABLE(tokens(line)) AS T(w, id)") \
        .get_schema().get_field_names() == ["id", "id0"]
    left = t_env.sql_query("SELECT id, w FROM lines LEFT JOIN LATERAL TABLE(tokens(line)) AS T(w, n) ON TRUE")
    assert "joinType=[LEFT]" in left.explain()
    inner = t_env.sql_query("SELECT id, w FROM lines JOIN LATERAL TABLE(tokens(line)) AS T(w, n) ON n > 1")
    assert "Calc(select=[id, w], where=[(n > 1)]" in inner.explain()


@pytest.mark.parametrize("query, message", [
    ("SELECT * FROM lines LEFT JOIN LATERAL TABLE(tokens(line)) AS T(w, n) ON n > 1", "takes only ON TRUE"),
    ("SELECT * FROM lines RIGHT JOIN LATERAL TABLE(tokens(line)) AS T(w, n) ON TRUE", "RIGHT JOIN LATERAL"),
    ("SELECT * FROM lines, LATERAL TABLE(nope(line))", "No match found for function signature nope"),
    ("SELECT * FROM lines, LATERAL TABLE(agg(line))", "agg is an aggregate function"),
    ("SELECT * FROM lines, LATERAL TABLE(tokens(line)) AS T(w)", "tokens emits 2 columns"),
    ("SELECT * FROM lines CROSS JOIN LATERAL TABLE(tokens(line)) AS T(w, n) ON TRUE", "Cannot specify condition"),
    ("SELECT * FROM lines JOIN LATERAL TABLE(tokens(line)) AS T(w, n)", "requires a condition"),
    ("SELECT * FROM lines, LATERAL (SELECT 1)", "lateral subquery"),
])
def test_sql_lateral_errors_name_the_construct(t_env, lines, query, message):
    from changeflow.functions import AggregateFunction

    class Agg(AggregateFunction):
        def create_accumulator(self):
            return []

        def accumulate(self, acc, v):
            acc.append(v)

        def get_value(self, acc):
            return len(acc)

    t_env._planning.catalog.functions.create("tokens", split.function, system=False)
    t_env._planning.catalog.functions.create("agg", udaf(Agg(), result_type="BIGINT", name="agg").function,
                                             system=False)
    with pytest.raises(SqlError, match=message):
        t_env.sql_query(query)
