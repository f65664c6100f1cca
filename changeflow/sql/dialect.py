"""The Flink SQL dialect for sqlglot, and :func:`parse`.

Flink's parser (Calcite with Flink's conformance) quotes identifiers with
backticks and string literals with single quotes; a quote inside a string is
doubled (``'it''s'``). Everything else (``WITH ('k' = 'v')`` table options,
``PROCTIME()``, ``ON CONFLICT DO ...``) parses with sqlglot's generic grammar,
which keeps unknown functions as ``exp.Anonymous`` calls for the planner to
resolve. Statements sqlglot has no grammar for (``SHOW TABLES``,
``EXPLAIN ...``) come back as ``exp.Command`` for the statement layer.
"""

from __future__ import annotations

import logging

import sqlglot
from sqlglot.helper import seq_get
from sqlglot import exp, generator, parser, tokens
from sqlglot.dialects.dialect import Dialect
from sqlglot.errors import ParseError, TokenError

from changeflow.sql.errors import SqlError
from changeflow.sql.json_functions import FUNCTION_PARSERS as JSON_FUNCTION_PARSERS




def _unit(arg: exp.Expr | None) -> exp.Expr | None:
    """TIMESTAMPDIFF's unit argument as the variable Spark's generator expects."""
    return exp.var(arg.name.upper()) if arg is not None else None

class Flink(Dialect):
    """sqlglot dialect of Flink SQL.

    >>> sqlglot.parse_one("SELECT `day` FROM t", dialect=Flink).sql(dialect=Flink)
    'SELECT `day` FROM t'
    """

    class Tokenizer(tokens.Tokenizer):
        IDENTIFIERS = ["`"]
        QUOTES = ["'"]
        STRING_ESCAPES = ["'"]
        # SESSION is no keyword of Flink SQL: ``GROUP BY SESSION(ts, INTERVAL ...)`` is a group
        # window call (changeflow.sql.group_window), which sqlglot's SESSION token cannot start.
        KEYWORDS = {k: v for k, v in tokens.Tokenizer.KEYWORDS.items() if k != "SESSION"}

    class Parser(parser.Parser):
        # A comma join (``FROM a, b``) comes back with kind CROSS, as Calcite reads it (a
        # cross product, conditions in WHERE). Without it a comma join and ``a JOIN b``
        # with its ON forgotten parse to the same tree, and the planner could not refuse
        # the latter as Flink does.
        JOINS_HAVE_EQUAL_PRECEDENCE = True

        # JSON_VALUE / JSON_QUERY / JSON_EXISTS / JSON_ARRAY with their RETURNING, ON EMPTY,
        # ON ERROR, WRAPPER and ON NULL clauses (changeflow.sql.json_functions).
        FUNCTION_PARSERS = {**parser.Parser.FUNCTION_PARSERS, **JSON_FUNCTION_PARSERS}

        # A typed literal's precision is its number of fractional digits, as in Calcite:
        # TIMESTAMP '2024-01-01 00:00:01.100' is a TIMESTAMP(3), TIME '01:02:03' a TIME(0)
        # (a CAST without a precision is TIMESTAMP(6) / TIME(0), so the two must differ).
        TYPE_LITERAL_PARSERS = {
            **parser.Parser.TYPE_LITERAL_PARSERS,
            exp.DType.TIMESTAMP: lambda self, this, _: _typed_literal(self, this, "TIMESTAMP"),
            exp.DType.TIME: lambda self, this, _: _typed_literal(self, this, "TIME"),
        }

        FUNCTIONS = {
            **parser.Parser.FUNCTIONS,
            # Flink's TIMESTAMPDIFF(unit, t1, t2) is t2 - t1 in units; sqlglot's generic
            # parser reads the arguments in another order and would upper-case t2's name.
            "TIMESTAMPDIFF": lambda args: exp.TimestampDiff(
                this=seq_get(args, 2), expression=seq_get(args, 1),
                unit=_unit(seq_get(args, 0))),
        }

    class Generator(generator.Generator):
        pass


def _typed_literal(p: parser.Parser, this: exp.Expr, type_name: str) -> exp.Expr:
    text = this.name if isinstance(this, exp.Literal) else ""
    digits = len(text.rsplit(".", 1)[1].strip()) if "." in text.rsplit(":", 1)[-1] else 0
    to = exp.DataType.build(f"{type_name}({min(digits, 9)})")
    return p.expression(exp.Cast(this=this, to=to))


def parse(sql: str) -> list[exp.Expr]:
    """The statements of ``sql`` (split on ``;``), parsed with the :class:`Flink` dialect.

    A syntax error raises :class:`~changeflow.sql.errors.SqlError` naming the
    line and column.

    >>> [type(s).__name__ for s in parse("SELECT 1; SELECT 2;")]
    ['Select', 'Select']
    """
    # sqlglot logs a warning when it falls back to a Command; the statement layer
    # decides whether a Command is supported, so the warning is noise here.
    log = logging.getLogger("sqlglot")
    level = log.level
    log.setLevel(logging.ERROR)
    try:
        from changeflow.sql.window_tvf import rewrite_window_tvfs  # TABLE(TUMBLE(TABLE t, ...)): see there

        statements = sqlglot.parse(rewrite_window_tvfs(sql), dialect=Flink)
    except ParseError as e:
        from changeflow.sql.refusals import window_construct  # names a window TVF sqlglot cannot read

        named = window_construct(sql)
        if named is not None:
            raise SqlError(named) from None
        first = e.errors[0] if e.errors else {}
        where = f" at line {first['line']}, column {first['col']}" if first.get("line") else ""
        description = first.get("description") or str(e).splitlines()[0]
        # sqlglot describes the token it stopped at as a Token repr; name its text instead.
        if "<Token " in description and first.get("highlight"):
            description = description.split("<Token ")[0] + repr(first["highlight"])
        raise SqlError(f"SQL parse error{where}: {description}") from None
    except TokenError as e:
        raise SqlError(f"SQL parse error: {e}") from None
    finally:
        log.setLevel(level)
    return [s for s in statements if s is not None]
