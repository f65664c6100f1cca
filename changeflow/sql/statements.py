"""``TableEnvironment.execute_sql``: one Flink SQL statement, dispatched by its leading keywords.

Queries (``SELECT``, ``WITH``, ``VALUES``) and the query parts of ``INSERT``,
``CREATE VIEW`` and ``EXPLAIN`` are parsed by the Flink dialect and planned by
:mod:`changeflow.sql.planner` into the engine's one logical plan. The other
statements act on the environment's catalog and configuration here, and each
returns a :class:`~changeflow.table.result.TableResult` shaped as PyFlink's:
``OK`` for DDL, a table of rows for ``SHOW`` and ``DESCRIBE``, the plan text
for ``EXPLAIN``.

``SET`` and ``RESET`` are statements of Flink's SQL client; PyFlink's
``execute_sql`` rejects them. changeflow accepts them (a SQL script can carry
its configuration) and validates keys and values through the configuration.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sqlglot.tokens import Token, TokenType

from changeflow.catalog import CatalogError, CatalogTable, CatalogView, identifier
from changeflow.common.configuration import Configuration
from changeflow.common.types import DataTypes
from changeflow.plan.type_inference import PlanError
from changeflow.sql.ddl import Cursor, DdlError, parse_create_table, tokenize
from changeflow.sql.on_conflict import reject_on_conflict, split_on_conflict
from changeflow.table.result import TableResult

if TYPE_CHECKING:
    from changeflow.table.environment import TableEnvironment

_QUERY_STARTS = ("SELECT", "WITH", "VALUES", "(")
_EXPLAIN_DETAILS = ("CHANGELOG_MODE", "ESTIMATED_COST", "JSON_EXECUTION_PLAN", "PLAN_ADVICE")


class StatementError(PlanError):
    """A statement changeflow does not run; names it."""


def statement_tokens(sql: str) -> list[Token]:
    """The tokens of exactly one statement (a trailing ``;`` is allowed)."""
    tokens = tokenize(sql)
    while tokens and tokens[-1].token_type == TokenType.SEMICOLON:
        tokens.pop()
    if any(t.token_type == TokenType.SEMICOLON for t in tokens):
        raise StatementError("execute_sql() takes a single SQL statement; this text holds several "
                             "(run them one at a time)")
    if not tokens:
        raise StatementError("empty SQL statement")
    return tokens


def execute(t_env: "TableEnvironment", sql: str) -> TableResult:
    """Run one statement on ``t_env``."""
    tokens = statement_tokens(sql)
    cur = Cursor(sql, tokens)
    head = cur.word()
    if head in _QUERY_STARTS:
        return t_env._execute(plan_sql_query(t_env, sql))
    if head == "INSERT":
        return insert(t_env, sql, cur)
    if head == "CREATE":
        return create(t_env, sql, cur)
    if head == "DROP":
        return drop(t_env, cur)
    if head == "SET":
        return set_option(t_env, cur)
    if head == "RESET":
        return reset_option(t_env, cur)
    if head == "EXPLAIN":
        return explain_statement(t_env, sql, cur)
    if head == "SHOW":
        return show(t_env, cur)
    if head in ("DESCRIBE", "DESC"):
        cur.next()
        name = cur.qualified_name()
        if not cur.at_end():
            cur.fail("unexpected text after the table name")
        return describe(t_env, name)
    raise StatementError(f"unsupported SQL statement {tokens[0].text!r} at line 1, column 1; changeflow runs "
                         "SELECT, INSERT INTO, CREATE TABLE/VIEW, DROP TABLE/VIEW, SET, RESET, EXPLAIN, "
                         "SHOW TABLES/VIEWS and DESCRIBE")


# --- queries -----------------------------------------------------------------------------


def plan_sql_query(t_env: "TableEnvironment", sql: str):
    """The logical plan of a query's text (``SELECT``, ``WITH``, ``VALUES``), planned over the catalog."""
    from changeflow.sql.planner import plan_query

    reject_on_conflict(sql, tokenize(sql), "a query")
    return plan_query(sql, t_env._resolve)


def query_text(cur: Cursor) -> str:
    """The rest of the statement from the cursor, as a query whose positions are the statement's.

    What precedes the query is blanked (newlines kept), so the planner's
    "at line L, column C" points into the statement the user wrote.
    """
    start = cur.tokens[cur.i].start
    blank = "".join("\n" if ch == "\n" else " " for ch in cur.sql[:start])
    return blank + cur.sql[start:cur.tokens[cur.stop - 1].end + 1]


# --- INSERT ------------------------------------------------------------------------------


def insert_plan(t_env: "TableEnvironment", sql: str, cur: Cursor):
    """``INSERT INTO t [(columns)] query [ON CONFLICT DO ...]`` as a plan ending in a ``Sink``."""
    cur.expect("INSERT")
    if cur.accept("OVERWRITE"):
        cur.fail("INSERT OVERWRITE is not supported (only batch file sinks in Flink have it)")
    cur.expect("INTO")
    name = cur.qualified_name()
    columns = None
    if cur.word() == "(" and cur.word(1) not in _QUERY_STARTS:
        columns = cur.name_list()
    if cur.word() == "ON" and cur.word(1) == "CONFLICT":
        cur.fail("ON CONFLICT must follow the query: INSERT INTO t SELECT ... ON CONFLICT DO DEDUPLICATE | "
                 "DO NOTHING | DO ERROR")
    if cur.at_end():
        cur.fail("expected the query to insert")
    stop, conflict = split_on_conflict(cur)
    if stop == cur.i:
        cur.fail("expected the query to insert before ON CONFLICT")
    query = query_text(Cursor(sql, cur.tokens, cur.i, stop))
    return t_env._insert_plan(name, plan_sql_query(t_env, query), columns, conflict=conflict)


def insert(t_env: "TableEnvironment", sql: str, cur: Cursor) -> TableResult:
    plan = insert_plan(t_env, sql, cur)
    return t_env._execute_insert(plan)


# --- CREATE / DROP -----------------------------------------------------------------------


def create(t_env: "TableEnvironment", sql: str, cur: Cursor) -> TableResult:
    kind = cur.word(2) if cur.word(1) == "TEMPORARY" else cur.word(1)
    if kind == "TABLE":
        table, if_not_exists = parse_create_table(sql, cur.tokens)
        t_env._check_computed_columns(table)
        t_env._catalog.create_table(table, if_not_exists)
        return TableResult.ok()
    if kind == "VIEW":
        cur.expect("CREATE")
        temporary = cur.accept("TEMPORARY")
        cur.expect("VIEW")
        if_not_exists = cur.accept("IF", "NOT", "EXISTS")
        name = cur.qualified_name()
        aliases = None
        if cur.word() == "(":
            aliases = cur.name_list()
        cur.expect("AS")
        if cur.at_end():
            cur.fail("expected the view's query")
        query = query_text(cur)
        plan = plan_sql_query(t_env, query)  # validates the query now, as Flink does
        if aliases is not None and len(aliases) != len(plan.schema):
            raise StatementError(f"view {name!r} names {len(aliases)} columns but its query has "
                                 f"{len(plan.schema)}: {plan.field_names}")
        t_env._catalog.create_view(CatalogView(name, temporary, query=(query, tuple(aliases or ()))), if_not_exists)
        return TableResult.ok()
    cur.fail("unsupported CREATE statement; changeflow runs CREATE [TEMPORARY] TABLE and CREATE [TEMPORARY] VIEW")


def drop(t_env: "TableEnvironment", cur: Cursor) -> TableResult:
    cur.expect("DROP")
    temporary = True if cur.accept("TEMPORARY") else None
    kind = cur.next().text.upper()
    if kind not in ("TABLE", "VIEW"):
        cur.i -= 1
        cur.fail("unsupported DROP statement; changeflow runs DROP TABLE and DROP VIEW")
    if_exists = cur.accept("IF", "EXISTS")
    name = cur.qualified_name()
    if not cur.at_end():
        cur.fail("unexpected text after the name")
    if kind == "TABLE":
        t_env._catalog.drop_table(name, if_exists, temporary)
    else:
        t_env._catalog.drop_view(name, if_exists, temporary)
    return TableResult.ok()


# --- SET / RESET -------------------------------------------------------------------------


def set_option(t_env: "TableEnvironment", cur: Cursor) -> TableResult:
    cur.expect("SET")
    conf: Configuration = t_env.get_config().get_configuration()
    if cur.at_end():
        string = DataTypes.STRING()
        return TableResult.of_rows((("key", string), ("value", string)), sorted(conf.to_dict().items()))
    key = _key(cur)
    cur.expect("=")
    value = _key(cur)
    if not cur.at_end():
        cur.fail("unexpected text after SET 'key' = 'value'")
    t_env.get_config().set(key, value)  # unknown table./execution. keys and bad values raise here
    return TableResult.ok()


def reset_option(t_env: "TableEnvironment", cur: Cursor) -> TableResult:
    cur.expect("RESET")
    if cur.at_end():
        t_env._reset_configuration()
        return TableResult.ok()
    key = _key(cur)
    if not cur.at_end():
        cur.fail("unexpected text after RESET 'key'")
    t_env._reset_configuration(key)
    return TableResult.ok()


def _key(cur: Cursor) -> str:
    token = cur.peek()
    if token is not None and token.token_type == TokenType.STRING:
        return cur.string()
    cur.fail("expected a quoted key or value, as SET 'table.exec.mini-batch.enabled' = 'true'")


# --- EXPLAIN / SHOW / DESCRIBE -----------------------------------------------------------


def explain_statement(t_env: "TableEnvironment", sql: str, cur: Cursor) -> TableResult:
    cur.expect("EXPLAIN")
    while cur.word() in _EXPLAIN_DETAILS or cur.word() == ",":
        cur.next()
    if cur.accept("PLAN", "FOR"):
        pass
    return TableResult.of_text(explain_text(t_env, sql, cur))


def explain_text(t_env: "TableEnvironment", sql: str, cur: Cursor | None = None) -> str:
    """The plan of the query or INSERT statement at the cursor (the whole of ``sql`` by default)."""
    cur = cur or Cursor(sql, statement_tokens(sql))
    if cur.word() == "INSERT":
        return t_env._explain(insert_plan(t_env, sql, Cursor(sql, cur.tokens, cur.i, cur.stop)))
    if cur.word() in _QUERY_STARTS:
        return t_env._explain(plan_sql_query(t_env, query_text(cur)))
    cur.fail("EXPLAIN takes a SELECT or an INSERT statement")


def show(t_env: "TableEnvironment", cur: Cursor) -> TableResult:
    cur.expect("SHOW")
    string = DataTypes.STRING()
    if cur.accept("TABLES") and cur.at_end():
        return TableResult.of_rows((("table name", string),), [(n,) for n in t_env._catalog.list_tables()])
    cur.i = 1
    if cur.accept("VIEWS") and cur.at_end():
        return TableResult.of_rows((("view name", string),), [(n,) for n in t_env._catalog.list_views()])
    cur.i = 1
    cur.fail("unsupported SHOW statement; changeflow runs SHOW TABLES and SHOW VIEWS")


_DESCRIBE_SCHEMA = (("name", DataTypes.STRING()), ("type", DataTypes.STRING()), ("null", DataTypes.BOOLEAN()),
                    ("key", DataTypes.STRING()), ("extras", DataTypes.STRING()),
                    ("watermark", DataTypes.STRING()))


def describe(t_env: "TableEnvironment", name: str) -> TableResult:
    """Flink's ``DESCRIBE``: name, type, null, key, extras, watermark per column."""
    if not t_env._catalog.contains(name):
        raise CatalogError(f"Tables or views with the identifier '{identifier(name)}' doesn't exist. "
                           f"Known tables and views: {', '.join(t_env._catalog.list_tables()) or '(none)'}")
    entry = t_env._catalog.get(name)
    if isinstance(entry, CatalogTable):
        schema = t_env._declared_schema(entry)
        return TableResult.of_rows(_DESCRIBE_SCHEMA, schema.describe_rows())
    plan = t_env._resolve(name)
    rows = [(n, str(t.with_nullable(True)), t.nullable, None, None, None) for n, t in plan.schema]
    return TableResult.of_rows(_DESCRIBE_SCHEMA, rows)


__all__ = ["DdlError", "StatementError", "execute", "plan_sql_query"]
