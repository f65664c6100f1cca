"""Constructs changeflow does not implement yet, refused by name instead of a bare parse error.

Flink's window table-valued functions (``TABLE(TUMBLE(TABLE t, DESCRIPTOR(ts), ...))``,
``HOP``, ``CUMULATE``, ``SESSION``) and the legacy group windows (``GROUP BY
TUMBLE(ts, ...)``, ``HOP(...)``, ``SESSION(...)``) need event time, which is another
issue's work. sqlglot cannot parse the TVF form at all (``DESCRIPTOR``, ``TABLE t`` as an
argument), so :func:`window_construct` looks at the tokens of a statement that failed to
parse and names the construct; :func:`refuse_group_window` names a legacy group window
that did parse (as an unknown function call). ``FOR SYSTEM_TIME AS OF`` outside a join
(time travel) parses and would otherwise be ignored: :func:`refuse_version` refuses it where
a table is read (a temporal join is :mod:`changeflow.sql.temporal_join`).
"""

from __future__ import annotations

from sqlglot import exp, tokens

from changeflow.sql.errors import SqlError, located, unsupported

WINDOW_FUNCTIONS = ("TUMBLE", "HOP", "CUMULATE", "SESSION")
# Auxiliary functions of the legacy group windows (TUMBLE_START(...) and so on).
_AUXILIARY = tuple(f"{w}_{p}" for w in ("TUMBLE", "HOP", "SESSION")
                   for p in ("START", "END", "ROWTIME", "PROCTIME"))


def window_construct(sql: str) -> str | None:
    """The message naming a window TVF or group window in ``sql``, if it has one."""
    try:
        toks = tokens.Tokenizer().tokenize(sql)
    except Exception:  # noqa: BLE001 - an untokenizable text keeps its own parse error
        return None
    words = [t.text.upper() for t in toks]
    for i, w in enumerate(words):
        if w in WINDOW_FUNCTIONS and i + 1 < len(words) and words[i + 1] == "(":
            is_tvf = i >= 2 and words[i - 1] == "(" and words[i - 2] == "TABLE"
            t = toks[i]
            where = f" (at line {t.line}, column {max(1, t.col - len(t.text) + 1)})"
            if is_tvf:
                return f"unsupported SQL: window TVF {w} (TABLE({w}(...))) is not supported yet{where}"
            return f"unsupported SQL: group window {w}(...) is not supported yet{where}"
        if w in _AUXILIARY and i + 1 < len(words) and words[i + 1] == "(":
            return f"unsupported SQL: group window function {w}(...) is not supported yet"
    return None


def refuse_group_window(node: exp.Expr, sql: str | None) -> None:
    """Refuse a legacy group window (``GROUP BY TUMBLE(ts, INTERVAL ...)``) or its auxiliary functions."""
    for call in node.find_all(exp.Anonymous):
        name = str(call.this).upper()
        if name in WINDOW_FUNCTIONS:
            raise unsupported(f"group window {name}(...) is not supported yet;", call, sql)
        if name in _AUXILIARY:
            raise unsupported(f"group window function {name}(...) is not supported yet;", call, sql)


def refuse_version(node: exp.Table, sql: str | None) -> None:
    """``FOR SYSTEM_TIME AS OF`` outside a join (time travel): not supported; a temporal join is planned by
    :mod:`changeflow.sql.temporal_join`."""
    if node.args.get("version") is not None:
        raise SqlError(located("unsupported SQL: FOR SYSTEM_TIME AS OF outside a join (time travel) is not "
                               f"supported (table {'.'.join(p.name for p in node.parts)}); a temporal join is "
                               "`probe JOIN versioned FOR SYSTEM_TIME AS OF probe.rowtime ON ...`", node, sql))
