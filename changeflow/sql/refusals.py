"""Constructs changeflow does not implement yet, refused by name instead of a bare parse error.

sqlglot cannot parse a window table-valued function (``TABLE(TUMBLE(TABLE t,
DESCRIPTOR(ts), ...))``) that :mod:`changeflow.sql.window_tvf` did not rewrite, so
:func:`window_construct` looks at the tokens of a statement that failed to parse and names
the construct (legacy group windows are :mod:`changeflow.sql.group_window`). ``FOR SYSTEM_TIME AS OF`` outside a join
(time travel) parses and would otherwise be ignored: :func:`refuse_version` refuses it where
a table is read (a temporal join is :mod:`changeflow.sql.temporal_join`).
"""

from __future__ import annotations

from sqlglot import exp, tokens

from changeflow.sql.errors import SqlError, located

WINDOW_FUNCTIONS = ("TUMBLE", "HOP", "CUMULATE", "SESSION")


def window_construct(sql: str) -> str | None:
    """The message naming a window TVF in ``sql``, if it has one (a group window that fails to parse
    keeps its parse error: group windows are supported)."""
    try:
        toks = tokens.Tokenizer().tokenize(sql)
    except Exception:  # noqa: BLE001 - an untokenizable text keeps its own parse error
        return None
    words = [t.text.upper() for t in toks]
    for i, w in enumerate(words):
        if (w in WINDOW_FUNCTIONS and i + 1 < len(words) and words[i + 1] == "("
                and i >= 2 and words[i - 1] == "(" and words[i - 2] == "TABLE"):
            t = toks[i]
            where = f" (at line {t.line}, column {max(1, t.col - len(t.text) + 1)})"
            return f"unsupported SQL: window TVF {w} (TABLE({w}(...))) is not supported yet{where}"
    return None


def refuse_version(node: exp.Table, sql: str | None) -> None:
    """``FOR SYSTEM_TIME AS OF`` outside a join (time travel): not supported; a temporal join is planned by
    :mod:`changeflow.sql.temporal_join`."""
    if node.args.get("version") is not None:
        raise SqlError(located("unsupported SQL: FOR SYSTEM_TIME AS OF outside a join (time travel) is not "
                               f"supported (table {'.'.join(p.name for p in node.parts)}); a temporal join is "
                               "`probe JOIN versioned FOR SYSTEM_TIME AS OF probe.rowtime ON ...`", node, sql))
