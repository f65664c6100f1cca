"""Table <-> DataStream conformance cases: programs written once against PyFlink's names.

Each case is ``program(env, t_env, api) -> DataStream | Table``: ``env`` is a
``StreamExecutionEnvironment`` set to the case's runtime mode, ``t_env`` the
``StreamTableEnvironment`` created on it, ``api`` a namespace of ``Types``,
``Row``, ``RowKind``, ``DataTypes``, ``Schema``, ``ChangelogMode``, ``col``
and ``lit`` taken from ``pyflink`` (``record_flink_bridge.py``) or
``changeflow`` (``tests/conformance/test_bridge_conformance.py``). This module
imports neither.

A DataStream result is collected with ``execute_and_collect()`` (records with
their RowKind), a Table result with ``execute().collect()`` (its changes). A
case with ``error`` set expects the program to fail with a message containing
that text.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable


@dataclass(frozen=True)
class Case:
    name: str
    mode: str          # "streaming" | "batch"
    program: Callable
    description: str
    ordered: bool      # compare in order (else as a multiset)
    error: str | None = None


CASES: dict[str, Case] = {}


def case(name: str, description: str, modes=("streaming", "batch"), ordered: bool = True,
         error: str | None = None):
    """Registers ``program`` under ``<name>_<mode>`` for each mode (batch results compare as multisets)."""
    def register(program):
        for mode in modes:
            full = f"{name}_{mode}"
            CASES[full] = Case(full, mode, program, description, ordered and mode == "streaming", error)
        return program
    return register


def _words(t_env, api):
    return t_env.from_elements([(1, "a"), (2, "bb"), (3, "a"), (4, "ccc")],
                               api.DataTypes.ROW([api.DataTypes.FIELD("id", api.DataTypes.BIGINT()),
                                                  api.DataTypes.FIELD("data", api.DataTypes.STRING())]))


@case("to_data_stream_rows", "to_data_stream of an insert-only table gives its rows")
def to_data_stream_rows(env, t_env, api):
    return t_env.to_data_stream(_words(t_env, api))


@case("to_data_stream_map", "rows of to_data_stream mapped with a Python function (typed LONG)")
def to_data_stream_map(env, t_env, api):
    ds = t_env.to_data_stream(_words(t_env, api).where(api.col("id") > 1))
    return ds.map(lambda r: r[0] * 10 + len(r[1]), output_type=api.Types.LONG())


@case("to_data_stream_updating", "to_data_stream refuses an updating table", modes=("streaming",),
      error="doesn't support consuming update changes")
def to_data_stream_updating(env, t_env, api):
    t = _words(t_env, api)
    return t_env.to_data_stream(t.group_by(api.col("data")).select(api.col("data"), api.col("id").sum.alias("s")))


@case("to_changelog_stream_aggregate", "to_changelog_stream of a group aggregate: Rows with their RowKind")
def to_changelog_stream_aggregate(env, t_env, api):
    t = _words(t_env, api)
    return t_env.to_changelog_stream(t.group_by(api.col("data")).select(api.col("data"),
                                                                         api.col("id").sum.alias("s")))


@case("to_changelog_stream_upsert_mode", "to_changelog_stream with ChangelogMode.upsert() and no target schema: "
      "Flink 2.3 still emits the -U rows (no primary key to upsert on)", modes=("streaming",))
def to_changelog_stream_upsert_mode(env, t_env, api):
    t = _words(t_env, api)
    return t_env.to_changelog_stream(t.group_by(api.col("data")).select(api.col("data"), api.col("id").sum.alias("s")),
                                     changelog_mode=api.ChangelogMode.upsert())


@case("from_data_stream_atomic", "a LONG stream becomes column f0")
def from_data_stream_atomic(env, t_env, api):
    ds = env.from_collection([3, 1, 2], type_info=api.Types.LONG())
    return t_env.from_data_stream(ds).select(api.col("f0"), (api.col("f0") + 1).alias("g"))


@case("from_data_stream_row_named", "a named Row stream's fields become columns, then an aggregate")
def from_data_stream_row_named(env, t_env, api):
    ds = env.from_collection([("a", 1), ("b", 2), ("a", 3)],
                             type_info=api.Types.ROW_NAMED(["w", "n"], [api.Types.STRING(), api.Types.INT()]))
    return t_env.from_data_stream(ds).group_by(api.col("w")).select(api.col("w"), api.col("n").sum.alias("total"))


@case("from_data_stream_tuple_fields", "a Tuple stream's fields renamed by position with expressions")
def from_data_stream_tuple_fields(env, t_env, api):
    ds = env.from_collection([("a", 1), ("b", 2)], type_info=api.Types.TUPLE([api.Types.STRING(), api.Types.INT()]))
    return t_env.from_data_stream(ds, api.col("word"), api.col("cnt")).select(api.col("cnt"), api.col("word"))


@case("from_data_stream_schema", "a Schema picks and types the derived columns by name")
def from_data_stream_schema(env, t_env, api):
    ds = env.from_collection([("a", 1), ("b", 2)],
                             type_info=api.Types.ROW_NAMED(["w", "n"], [api.Types.STRING(), api.Types.INT()]))
    # Flink does not cast a derived column: the declared type must be the field's (INT stays INT).
    schema = api.Schema.new_builder().column("n", api.DataTypes.INT()).column("w", api.DataTypes.STRING()).build()
    return t_env.from_data_stream(ds, schema)


@case("temporary_view_of_stream", "create_temporary_view of a DataStream, queried with SQL")
def temporary_view_of_stream(env, t_env, api):
    ds = env.from_collection([("a", 1), ("b", 2), ("a", 5)],
                             type_info=api.Types.ROW_NAMED(["w", "n"], [api.Types.STRING(), api.Types.INT()]))
    t_env.create_temporary_view("clicks", ds)
    return t_env.sql_query("SELECT w, n * 2 AS n2 FROM clicks WHERE n > 1")


@case("mixed_round_trip", "table -> to_data_stream -> map -> from_data_stream -> table query")
def mixed_round_trip(env, t_env, api):
    ds = t_env.to_data_stream(_words(t_env, api)).map(
        lambda r: api.Row(r[1], r[0] * 2),
        output_type=api.Types.ROW_NAMED(["data", "twice"], [api.Types.STRING(), api.Types.LONG()]))
    return t_env.from_data_stream(ds).group_by(api.col("data")).select(api.col("data"),
                                                                       api.col("twice").max.alias("m"))


@case("changelog_round_trip_batch_refused", "batch mode refuses a changelog source that is not insert-only",
      modes=("batch",), error="only possible for INSERT-only table sources")
def changelog_round_trip_batch_refused(env, t_env, api):
    return changelog_round_trip(env, t_env, api)


def _changelog(env, api):
    rows = [api.Row.of_kind(api.RowKind.INSERT, "alice", 12), api.Row.of_kind(api.RowKind.INSERT, "bob", 5),
            api.Row.of_kind(api.RowKind.UPDATE_BEFORE, "alice", 12),
            api.Row.of_kind(api.RowKind.UPDATE_AFTER, "alice", 100),
            api.Row.of_kind(api.RowKind.DELETE, "bob", 5), api.Row.of_kind(api.RowKind.INSERT, "carol", 7)]
    return env.from_collection(rows, type_info=api.Types.ROW_NAMED(["name", "score"],
                                                                   [api.Types.STRING(), api.Types.INT()]))


@case("from_changelog_stream_rows", "from_changelog_stream: the Rows' RowKinds become the table's changes",
      modes=("streaming",))
def from_changelog_stream_rows(env, t_env, api):
    return t_env.from_changelog_stream(_changelog(env, api))


@case("from_changelog_stream_sum", "a global SUM over a changelog stream with updates and deletes",
      modes=("streaming",))
def from_changelog_stream_sum(env, t_env, api):
    return t_env.from_changelog_stream(_changelog(env, api)).select(api.col("score").sum.alias("total"))


@case("changelog_round_trip", "an updating table through to_changelog_stream and back into from_changelog_stream",
      modes=("streaming",))
def changelog_round_trip(env, t_env, api):
    t = _words(t_env, api)
    agg = t.group_by(api.col("data")).select(api.col("data"), api.col("id").sum.alias("s"))
    back = t_env.from_changelog_stream(t_env.to_changelog_stream(agg))
    return back.select(api.col("s").sum.alias("total"), api.col("s").count.alias("groups"))


@case("to_retract_stream", "to_retract_stream of a group aggregate: (flag, row) tuples", modes=("streaming",))
def to_retract_stream(env, t_env, api):
    t = _words(t_env, api)
    agg = t.group_by(api.col("data")).select(api.col("data"), api.col("id").sum.alias("s"))
    return t_env.to_retract_stream(agg, api.Types.ROW([api.Types.STRING(), api.Types.LONG()]))


@case("to_append_stream", "to_append_stream of an insert-only table into a typed Row stream")
def to_append_stream(env, t_env, api):
    return t_env.to_append_stream(_words(t_env, api), api.Types.ROW([api.Types.LONG(), api.Types.STRING()]))


def _upserts(env, api):
    """An upsert changelog keyed by ``name``: repeats of equal rows, a key-only delete, a delete of no row."""
    kinds = api.RowKind
    rows = [api.Row.of_kind(kinds.INSERT, "alice", 12), api.Row.of_kind(kinds.INSERT, "bob", 5),
            api.Row.of_kind(kinds.UPDATE_AFTER, "alice", 100), api.Row.of_kind(kinds.INSERT, "alice", 100),
            api.Row.of_kind(kinds.UPDATE_AFTER, "alice", 100), api.Row.of_kind(kinds.INSERT, "bob", 5),
            api.Row.of_kind(kinds.DELETE, "bob", None), api.Row.of_kind(kinds.DELETE, "dave", None),
            api.Row.of_kind(kinds.INSERT, "carol", 7), api.Row.of_kind(kinds.UPDATE_AFTER, "bob", 9),
            api.Row.of_kind(kinds.DELETE, "bob", 9), api.Row.of_kind(kinds.UPDATE_AFTER, "carol", 8)]
    return env.from_collection(rows, type_info=api.Types.ROW_NAMED(["name", "score"],
                                                                   [api.Types.STRING(), api.Types.INT()]))


def _keyed_schema(api):
    return (api.Schema.new_builder().column("name", api.DataTypes.STRING().not_null())
            .column("score", api.DataTypes.INT()).primary_key("name").build())


@case("from_changelog_stream_upsert", "from_changelog_stream in upsert mode: ChangelogNormalize by the primary key "
      "adds -U rows, drops a repeated +I, completes a key-only -D and ignores a -D of no row", modes=("streaming",))
def from_changelog_stream_upsert(env, t_env, api):
    return t_env.from_changelog_stream(_upserts(env, api), _keyed_schema(api), api.ChangelogMode.upsert())


@case("from_changelog_stream_upsert_sum", "a global SUM over an upsert changelog stream", modes=("streaming",))
def from_changelog_stream_upsert_sum(env, t_env, api):
    t = t_env.from_changelog_stream(_upserts(env, api), _keyed_schema(api), api.ChangelogMode.upsert())
    return t.select(api.col("score").sum.alias("total"))


@case("from_changelog_stream_upsert_no_key", "upsert mode without a primary key: no ChangelogNormalize, the "
      "changes pass as they are", modes=("streaming",))
def from_changelog_stream_upsert_no_key(env, t_env, api):
    return t_env.from_changelog_stream(_upserts(env, api), changelog_mode=api.ChangelogMode.upsert())


def _duplicated_cdc(env, api):
    """A retract changelog keyed by ``name`` whose events arrive twice (a CDC source's at-least-once)."""
    kinds = api.RowKind
    events = [(kinds.INSERT, "alice", 12), (kinds.INSERT, "bob", 5), (kinds.UPDATE_BEFORE, "alice", 12),
              (kinds.UPDATE_AFTER, "alice", 100), (kinds.DELETE, "bob", 5), (kinds.INSERT, "carol", 7)]
    rows = [api.Row.of_kind(k, n, s) for k, n, s in events for _ in range(2)]
    return env.from_collection(rows, type_info=api.Types.ROW_NAMED(["name", "score"],
                                                                   [api.Types.STRING(), api.Types.INT()]))


@case("cdc_events_duplicate", "table.exec.source.cdc-events-duplicate: a keyed changelog's duplicated events "
      "normalized by ChangelogNormalize, a SUM over it", modes=("streaming",))
def cdc_events_duplicate(env, t_env, api):
    t_env.get_config().set("table.exec.source.cdc-events-duplicate", "true")
    t = t_env.from_changelog_stream(_duplicated_cdc(env, api), _keyed_schema(api))
    return t.select(api.col("score").sum.alias("total"))


@case("cdc_events_duplicate_rows", "table.exec.source.cdc-events-duplicate: the normalized changelog itself",
      modes=("streaming",))
def cdc_events_duplicate_rows(env, t_env, api):
    t_env.get_config().set("table.exec.source.cdc-events-duplicate", "true")
    return t_env.from_changelog_stream(_duplicated_cdc(env, api), _keyed_schema(api))
