"""``call_sql('UPPER(name) || ''!''')``: a SQL expression used inside the Table API.

PyFlink's ``expressions.call_sql`` parses a SQL expression and resolves it against the
table it is used on. Here the text is parsed with the Flink dialect and translated by
the SQL front end's :class:`~changeflow.sql.scalar.ExpressionTranslator`, with a scope
that takes every unqualified name as a column of that table, so the result is an
ordinary expression tree the Table API types and compiles like ``col(..)`` calls.
An aggregate call is refused, as Flink fails on one (``Unknown identifier`` in a
grouped select, ``Unsupported call: SUM(BIGINT)`` when a global select runs); so are a
subquery and a qualified column (``t.name``), each named.
"""

from __future__ import annotations

from sqlglot import exp

from changeflow.expressions import Expression
from changeflow.sql.dialect import parse
from changeflow.sql.errors import SqlError, located, unsupported
from changeflow.sql.scalar import ExpressionTranslator, Scope


class _OpenScope(Scope):
    """Every unqualified name is the table's column of that name (checked when the Table API types it)."""

    def __init__(self) -> None:
        super().__init__([])

    def lookup(self, node: exp.Column, sql: str | None) -> str:
        if node.table:
            raise SqlError(located(f"qualified column '{node.table}.{node.name}' in call_sql (name the column "
                                   "of the table alone)", node, sql))
        return node.name


def sql_expression(text: str) -> Expression:
    """The expression the SQL text ``text`` denotes, over the columns of the table it is used on."""
    if not isinstance(text, str) or not text.strip():
        raise SqlError(f"call_sql needs a SQL expression string, got {text!r}")
    sql = f"SELECT {text}"
    statements = parse(sql)
    if len(statements) != 1 or not isinstance(statements[0], exp.Select) or len(statements[0].expressions) != 1 \
            or any(statements[0].args.get(a) for a in ("from", "from_", "where", "group")):
        raise SqlError(f"call_sql takes one SQL expression, got {text!r}")
    node = statements[0].expressions[0]
    for sub in node.find_all(exp.Subquery, exp.Select, exp.Exists):
        if sub is not statements[0]:
            raise unsupported("subquery in call_sql", sub, sql)
    translated = ExpressionTranslator(_OpenScope(), sql, aggregates=True).tr(node)
    if translated.contains_aggregate():
        raise unsupported("aggregate function in call_sql (Flink cannot run one; use the Table API's "
                          "aggregates, col('v').sum)", node, sql)
    return translated
