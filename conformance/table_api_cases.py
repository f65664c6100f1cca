"""Conformance cases of the rest of the Table API: ordering and limits, column operations,
expression functions, statement sets. Shared by ``record_flink_table_api.py`` (PyFlink 2.3)
and ``tests/conformance/test_table_api_conformance.py`` (changeflow).

A case is ``build(t_env, E) -> Table`` where ``E`` has ``col``, ``lit``, ``DataTypes`` and
``x`` (the ``expressions`` module: ``E.x.concat``...), from ``pyflink.table`` or
``changeflow.table``; this module imports neither. ``error=True`` cases record the error
Flink raises (its first line) instead of rows. A statement-set case is
``build(t_env, E, directory) -> [sink names]``: it runs a statement set into filesystem
sinks under ``directory`` and the recorder reads each sink back.

Goldens: ``conformance/goldens/table_api/<case>.json``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Dict

__all__ = ["ApiCase", "CASES"]


@dataclass(frozen=True)
class ApiCase:
    name: str
    build: Callable
    mode: str = "streaming"
    ordered: bool = True      # False: compare the materialized result only
    error: bool = False       # the build's execution fails in Flink: compare the message
    statement_set: bool = False


CASES: Dict[str, ApiCase] = {}


def case(name: str, mode: str = "streaming", ordered: bool = True, error: bool = False,
         statement_set: bool = False):
    def register(build: Callable) -> Callable:
        assert name not in CASES, name
        CASES[name] = ApiCase(name, build, mode, ordered, error, statement_set)
        return build
    return register


ROWS = [(1, "a", 5), (2, "b", 3), (3, None, 9), (4, "d", 1), (5, "e", 7), (6, "f", 3)]


def _t(t_env):
    return t_env.from_elements(ROWS, ["id", "name", "v"])


# --- ordering and limits ------------------------------------------------------------------
@case("batch_order_by_desc", mode="batch")
def _(t_env, E):
    return _t(t_env).order_by(E.col("v").desc, E.col("id"))


@case("batch_order_by_nulls_asc", mode="batch")
def _(t_env, E):
    return _t(t_env).order_by(E.col("name"))


@case("batch_order_by_nulls_desc", mode="batch")
def _(t_env, E):
    return _t(t_env).order_by(E.col("name").desc)


@case("batch_order_by_offset_fetch", mode="batch")
def _(t_env, E):
    return _t(t_env).order_by(E.col("v"), E.col("id").desc).offset(1).fetch(3)


@case("batch_order_by_expression_limit", mode="batch")
def _(t_env, E):
    return _t(t_env).order_by((E.col("v") % 4).desc, E.col("id")).limit(3, 1).select(E.col("id"), E.col("v"))


@case("streaming_order_by_fetch")
def _(t_env, E):
    return _t(t_env).order_by(E.col("v").desc).fetch(2)


@case("streaming_order_by_offset_fetch")
def _(t_env, E):
    return _t(t_env).order_by(E.col("v")).offset(1).fetch(2)


@case("streaming_limit_without_order")
def _(t_env, E):
    return _t(t_env).limit(2)


@case("streaming_order_by_without_fetch", error=True)
def _(t_env, E):
    return _t(t_env).order_by(E.col("v"))


# --- column operations ------------------------------------------------------------------
for _mode in ("streaming", "batch"):
    @case(f"{_mode}_drop_rename_add_or_replace", mode=_mode, ordered=_mode == "streaming")
    def _(t_env, E):
        t = _t(t_env).drop_columns(E.col("name"))
        t = t.rename_columns(E.col("v").alias("value"))
        return t.add_or_replace_columns((E.col("value") * 10).alias("value"), (E.col("id") + 1).alias("next"))

    @case(f"{_mode}_with_and_without_columns", mode=_mode, ordered=_mode == "streaming")
    def _(t_env, E):
        t = _t(t_env)
        return t.select(E.x.with_columns(E.x.range_(1, 2)), E.x.without_columns(E.col("id"), E.col("name")),
                        E.col("v").alias("v2"))

    @case(f"{_mode}_star_and_attribute_access", mode=_mode, ordered=_mode == "streaming")
    def _(t_env, E):
        t = _t(t_env)
        return t.where(t.id > 4).select(E.col("*")).add_columns((t.v + 1).alias("w"))


# --- expression functions ---------------------------------------------------------------
@case("batch_string_functions", mode="batch", ordered=False)
def _(t_env, E):
    c, x = E.col, E.x
    return _t(t_env).select(
        c("id"),
        x.concat(c("name"), "-", c("name")).alias("cat"),
        x.concat_ws("|", c("name"), "z").alias("cws"),
        x.coalesce(c("name"), "none").alias("co"),
        c("name").upper_case.alias("up"),
        c("name").lower_case.alias("lo"),
        c("name").char_length.alias("len"),
        c("name").like("a%").alias("lk"),
        c("name").substring(1, 1).alias("sub"),
        c("name").if_null("?").alias("inull"),
        c("name").init_cap.alias("ic"),
        c("name").lpad(3, "*").alias("lp"),
        c("name").trim().alias("tr"))


@case("batch_numeric_and_logic_functions", mode="batch", ordered=False)
def _(t_env, E):
    c, x = E.col, E.x
    return _t(t_env).select(
        c("id"),
        x.if_then_else(c("v") > 4, "big", "small").alias("ite"),
        c("v").between(3, 5).alias("btw"),
        c("v").not_between(3, 5).alias("nbtw"),
        c("id").in_(1, 3, 5).alias("isin"),
        x.and_(c("v") > 1, c("id") < 4).alias("a"),
        x.or_(c("v") > 8, c("id") == 1).alias("o"),
        x.not_(c("v") > 4).alias("n"),
        (c("v") > 4).then(1, 0).alias("th"),
        c("v").abs.alias("ab"),
        (c("v") ** 2).alias("pw"),
        c("v").sqrt.alias("sq"),
        c("v").ln.alias("lnv"),
        c("v").exp.alias("ex"),
        c("v").floor().alias("fl"),
        (c("v") / 2).alias("half"),
        x.null_of(E.DataTypes.INT()).alias("nul"),
        c("name").is_null.alias("isn"))


@case("batch_time_functions", mode="batch", ordered=False)
def _(t_env, E):
    c, x = E.col, E.x
    return _t(t_env).where(c("id") == 1).select(
        x.to_date("2024-03-05").alias("d"),
        x.to_timestamp("2024-03-05 10:11:12").alias("ts"),
        E.lit("2024-03-05").to_date.alias("d2"),
        x.date_format(x.to_timestamp("2024-03-05 10:11:12"), "yyyy/MM/dd").alias("fmt"))


# --- call_sql: a SQL expression inside the Table API ----------------------------------------
@case("call_sql_select_and_filter")
def _(t_env, E):
    c, x = E.col, E.x
    return _t(t_env).where(x.call_sql("v > 2 AND name IS NOT NULL")).select(
        c("id"), x.call_sql("UPPER(name) || '!'"), x.call_sql("CAST(v AS DOUBLE) / 2").alias("half"))


@case("call_sql_group_key", ordered=False)
def _(t_env, E):
    c, x = E.col, E.x
    return _t(t_env).group_by(x.call_sql("MOD(v, 2)").alias("odd")).select(c("odd"), c("v").sum)


# --- statement sets ------------------------------------------------------------------------
def _sink(t_env, name, directory):
    t_env.execute_sql(f"CREATE TABLE {name} (id BIGINT, name STRING) WITH ('connector' = 'filesystem', "
                      f"'path' = '{directory}/{name}', 'format' = 'csv')")


for _mode in ("streaming", "batch"):
    @case(f"{_mode}_statement_set_two_sinks", mode=_mode, statement_set=True)
    def _(t_env, E, directory):
        _sink(t_env, "low_sink", directory)
        _sink(t_env, "high_sink", directory)
        t = _t(t_env).select(E.col("id"), E.col("name"))
        t_env.create_temporary_view("ids", t)
        statement_set = t_env.create_statement_set()
        statement_set.add_insert("low_sink", t.where(E.col("id") <= 2))
        statement_set.add_insert_sql("INSERT INTO high_sink SELECT id, name FROM ids WHERE id >= 5")
        statement_set.execute().wait()
        return ["low_sink", "high_sink"]


# Event-time group windows and OVER windows (issue 18).
from conformance import table_window_cases  # noqa: E402,F401  (registers its cases into CASES)
