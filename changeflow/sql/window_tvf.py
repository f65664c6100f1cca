"""Window table-valued functions: ``FROM TABLE(TUMBLE(TABLE t, DESCRIPTOR(ts), INTERVAL '10' SECOND))``.

sqlglot cannot parse Flink's TVF call (``TABLE t`` and ``DESCRIPTOR(ts)`` as
arguments, ``name => value`` in any order), so :func:`rewrite_window_tvfs`
rewrites the text first, token by token, into a plain table function call
sqlglot reads, ``TUMBLE(t, ts, INTERVAL '10' SECOND)`` (arguments in their
positional order; a SESSION's ``PARTITION BY`` columns follow its gap);
:func:`plan_window_tvf` then plans that call as a
:class:`~changeflow.plan.event_time.WindowTableFunction` over the table.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sqlglot import exp, tokens
from sqlglot.tokenizer_core import TokenType

from changeflow.catalog import join_path
from changeflow.plan.event_time import WindowSpec, window_table_function
from changeflow.sql.errors import SqlError, located, unsupported
from changeflow.sql.scalar import Scope, ScopeColumn

if TYPE_CHECKING:
    from changeflow.plan.nodes import PlanNode
    from changeflow.sql.planner import QueryPlanner

# Each window TVF's parameters in positional order (Flink's names for ``name => value``).
PARAMETERS = {
    "TUMBLE": ("DATA", "TIMECOL", "SIZE", "OFFSET"),
    "HOP": ("DATA", "TIMECOL", "SLIDE", "SIZE", "OFFSET"),
    "CUMULATE": ("DATA", "TIMECOL", "STEP", "SIZE", "OFFSET"),
    "SESSION": ("DATA", "TIMECOL", "GAP"),
}
# The TVF's name in the rewritten text, so a user's own function named TUMBLE is never taken for it.
_MARK = "__window_tvf_"


def rewrite_window_tvfs(sql: str) -> str:
    """``sql`` with every ``TABLE(<window>(...))`` rewritten as a call sqlglot parses.

    >>> rewrite_window_tvfs("SELECT * FROM TABLE(HOP(TABLE t, DESCRIPTOR(ts), INTERVAL '5' SECOND, "
    ...                     "SIZE => INTERVAL '10' SECOND))")
    "SELECT * FROM __window_tvf_HOP(t, ts, INTERVAL '5' SECOND, INTERVAL '10' SECOND)"
    """
    try:
        toks = tokens.Tokenizer().tokenize(sql)
    except Exception:  # noqa: BLE001 - the parser reports an untokenizable text itself
        return sql
    out, last, i = [], 0, 0
    while i + 3 < len(toks):
        name = toks[i + 2].text.upper()
        if not (toks[i].token_type == TokenType.TABLE and toks[i + 1].token_type == TokenType.L_PAREN
                and name in PARAMETERS and toks[i + 3].token_type == TokenType.L_PAREN):
            i += 1
            continue
        where = f"(at line {toks[i + 2].line}, column {max(1, toks[i + 2].col - len(toks[i + 2].text) + 1)})"
        close = _matching(toks, i + 3)
        outer = close + 1
        if outer >= len(toks) or toks[outer].token_type != TokenType.R_PAREN:
            raise SqlError(f"SQL parse error: TABLE({name}(...)) expects ')' after the call {where}")
        args = _arguments(sql, toks[i + 4:close], name, where)
        out.append(sql[last:toks[i].start])
        out.append(f"{_MARK}{name}({', '.join(args)})")
        last = toks[outer].end + 1
        i = outer + 1
    out.append(sql[last:])
    return "".join(out)


def _matching(toks: list, open_index: int) -> int:
    """The index of the parenthesis closing the one at ``open_index``."""
    depth = 0
    for j in range(open_index, len(toks)):
        if toks[j].token_type == TokenType.L_PAREN:
            depth += 1
        elif toks[j].token_type == TokenType.R_PAREN:
            depth -= 1
            if depth == 0:
                return j
    raise SqlError(f"SQL parse error: unbalanced parentheses after {toks[open_index - 1].text}")


def _arguments(sql: str, toks: list, name: str, where: str) -> list[str]:
    """The call's arguments as text, in positional order (``TABLE t`` -> ``t``, ``DESCRIPTOR(c)`` -> ``c``)."""
    parts, depth, current = [], 0, []
    for t in toks:
        if t.token_type == TokenType.COMMA and depth == 0:
            parts.append(current)
            current = []
            continue
        depth += t.token_type == TokenType.L_PAREN
        depth -= t.token_type == TokenType.R_PAREN
        current.append(t)
    if current:
        parts.append(current)
    params = PARAMETERS[name]
    positional: list[str] = []
    named: dict[str, str] = {}
    partition: list[str] = []
    for part in parts:
        label = None
        if len(part) > 2 and part[1].token_type == TokenType.FARROW:
            label, part = part[0].text.upper(), part[2:]
            if label not in params:
                raise SqlError(f"{name} has no parameter named {label}; its parameters are "
                               f"{', '.join(params)} {where}")
        text, keys = _argument_text(sql, part, name, where)
        partition += keys
        if label is None:
            if named:
                raise SqlError(f"{name}: a positional argument after a named one {where}")
            positional.append(text)
        else:
            named[label] = text
    values = dict(zip(params, positional, strict=False))
    for label, text in named.items():
        if label in values:
            raise SqlError(f"{name}: parameter {label} given twice {where}")
        values[label] = text
    required = params[:-1]  # OFFSET is optional
    missing = [p for p in required if p not in values]
    if missing or len(positional) > len(params):
        raise SqlError(f"{name} expects the arguments ({', '.join(params)}), OFFSET optional; "
                       f"missing: {', '.join(missing) or 'none'} {where}")
    return [values[p] for p in params if p in values] + partition


def _argument_text(sql: str, part: list, name: str, where: str) -> tuple[str, list[str]]:
    """An argument's text, and the columns of a table argument's ``PARTITION BY``."""
    if not part:
        raise SqlError(f"{name}: an empty argument {where}")
    first = part[0]
    if first.token_type == TokenType.TABLE:
        # The tokenizer reads PARTITION BY as one token or as two.
        words = [" ".join(t.text.upper().split()) for t in part]
        cut = next((i for i, w in enumerate(words) if w.startswith("PARTITION")), len(part))
        if cut < 2:
            raise SqlError(f"{name}: TABLE needs a table name {where}")
        by = cut + (1 if cut < len(part) and words[cut] == "PARTITION BY" else 2)
        keys = part[by:] if cut < len(part) else []
        if cut < len(part):
            if name != "SESSION":
                raise SqlError(f"unsupported SQL: PARTITION BY in the table argument of {name} {where}")
            if not keys or (by == cut + 2 and words[cut + 1] != "BY"):
                raise SqlError(f"{name}: PARTITION BY needs columns {where}")
        columns = [sql[t.start:t.end + 1] for t in keys if t.token_type not in
                   (TokenType.COMMA, TokenType.L_PAREN, TokenType.R_PAREN)]
        return sql[part[1].start:part[cut - 1].end + 1], columns
    if first.text.upper() == "DESCRIPTOR":
        if len(part) < 4 or part[1].token_type != TokenType.L_PAREN or part[-1].token_type != TokenType.R_PAREN:
            raise SqlError(f"{name}: DESCRIPTOR(column) expected {where}")
        inner = part[2:-1]
        if sum(t.token_type == TokenType.COMMA for t in inner):
            raise SqlError(f"{name}: DESCRIPTOR names exactly one time column {where}")
        return sql[inner[0].start:inner[-1].end + 1], []
    return sql[first.start:part[-1].end + 1], []


def is_window_tvf(node: exp.Expr) -> bool:
    """Whether a FROM item is a rewritten window TVF call."""
    return (isinstance(node, exp.Table) and isinstance(node.this, exp.Anonymous)
            and str(node.this.this).startswith(_MARK))


def plan_window_tvf(planner: "QueryPlanner", node: exp.Expr) -> tuple["PlanNode", Scope]:
    """The window TVF ``node`` (a rewritten call, :func:`is_window_tvf`) as a WindowTableFunction, and its scope."""
    assert isinstance(node, exp.Table)
    call = node.this
    name = str(call.this)[len(_MARK):].upper()
    args = list(call.expressions)
    data, timecol, *durations = args
    if not isinstance(data, exp.Column) or not isinstance(timecol, exp.Column):
        raise unsupported(f"{name}: the table and time column arguments", call, planner.sql)
    table = join_path([p.name for p in data.parts])
    plan = planner.table(table, data)
    params = PARAMETERS[name][2:]
    if name == "SESSION":
        gap, *keys = durations
        partition = tuple(k.name for k in keys if isinstance(k, exp.Column))
        if len(partition) != len(keys):
            raise unsupported("SESSION: PARTITION BY an expression (name columns)", call, planner.sql)
        window = WindowSpec("SESSION", duration_ms(planner, gap, name), partition_keys=partition)
        windowed = planner.guard(lambda: window_table_function(plan, timecol.name, window), timecol)
        return windowed, Scope([ScopeColumn(node.alias or None, n, n) for n in windowed.field_names])
    millis = [duration_ms(planner, d, name) for d in durations]
    values = dict(zip(params, millis, strict=False))
    if name == "TUMBLE":
        window = WindowSpec("TUMBLE", values["SIZE"], offset_ms=values.get("OFFSET", 0))
    elif name == "HOP":
        window = WindowSpec("HOP", values["SIZE"], slide_ms=values["SLIDE"], offset_ms=values.get("OFFSET", 0))
        if window.size_ms % (window.slide_ms or 1):
            raise SqlError(located(f"HOP table function based aggregate requires size must be an integral "
                                   f"multiple of slide, but got size {window.size_ms} ms and slide "
                                   f"{window.slide_ms} ms", call, planner.sql))
    else:
        window = WindowSpec("CUMULATE", values["SIZE"], step_ms=values["STEP"], offset_ms=values.get("OFFSET", 0))
        if window.size_ms % (window.step_ms or 1):
            raise SqlError(located(f"CUMULATE table function based aggregate requires maxSize must be an "
                                   f"integral multiple of step, but got maxSize {window.size_ms} ms and step "
                                   f"{window.step_ms} ms", call, planner.sql))
    windowed = planner.guard(lambda: window_table_function(plan, timecol.name, window), timecol)
    alias = node.alias or None
    return windowed, Scope([ScopeColumn(alias, n, n) for n in windowed.field_names])


_UNIT_MS = {"MILLISECOND": 1, "SECOND": 1000, "MINUTE": 60_000, "HOUR": 3_600_000, "DAY": 86_400_000}


def duration_ms(planner: "QueryPlanner", arg: exp.Expr, name: str) -> int:
    """A window size, slide, step or offset: an ``INTERVAL 'n' UNIT`` literal, in milliseconds."""
    if not isinstance(arg, exp.Interval) or arg.unit is None:
        raise SqlError(located(f"{name}: a window size must be an INTERVAL literal, got {arg.sql()}", arg,
                               planner.sql))
    unit = arg.unit.name.upper()
    unit = unit[:-1] if unit.endswith("S") and unit[:-1] in _UNIT_MS else unit   # Flink accepts MINUTES too
    try:
        ms = round(float(arg.this.name) * _UNIT_MS[unit])
    except (KeyError, ValueError, AttributeError):
        raise SqlError(located(f"{name}: unsupported window size {arg.sql()} (an INTERVAL of a number of "
                               f"{', '.join(_UNIT_MS)}S)", arg, planner.sql)) from None
    if ms <= 0:
        raise SqlError(located(f"{name}: a window size must be positive, got {arg.sql()}", arg, planner.sql))
    return ms
