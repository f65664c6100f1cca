"""Column operations of the Table API: ``col('*')``, ``with_columns`` / ``without_columns`` /
``range_``, ``drop_columns``, ``rename_columns``, ``add_or_replace_columns``.

They become projections (:func:`changeflow.plan.builder.project`), as in Flink,
where they are expanded before planning too (``ColumnOperationUtils`` and the
column-function expansion of its expression resolver).
"""

from __future__ import annotations

from changeflow.expressions import Alias, Call, Column, Expression, Literal, strip_alias
from changeflow.plan import builder
from changeflow.plan.nodes import PlanNode
from changeflow.plan.type_inference import PlanError


def expand(plan: PlanNode, exprs: list[Expression]) -> list[Expression]:
    """``exprs`` with ``col('*')``, ``with_columns(...)`` and ``without_columns(...)`` replaced by the
    columns of ``plan`` they stand for (in the table's column order)."""
    names = plan.field_names
    out: list[Expression] = []
    for e in exprs:
        if isinstance(e, Column) and e.name == "*":
            out.extend(Column(n) for n in names)
        elif isinstance(e, Call) and e.function in ("with_columns", "without_columns"):
            chosen = _selected(names, e.args, e.function)
            kept = chosen if e.function == "with_columns" else [n for n in names if n not in chosen]
            out.extend(Column(n) for n in kept)
        else:
            out.append(e)
    return out


def _selected(names: list[str], args: tuple[Expression, ...], function: str) -> list[str]:
    """The column names ``args`` (columns, ``range_``, 1-based positions, ``col('*')``) select, in table order."""
    chosen: set[str] = set()
    for a in args:
        if isinstance(a, Column):
            chosen.update(names if a.name == "*" else [_known(names, a.name, function)])
        elif isinstance(a, Literal):
            chosen.add(names[_position(names, a.value, function)])
        elif isinstance(a, Call) and a.function == "range":
            start, end = (_position(names, arg.value, function) for arg in a.args if isinstance(arg, Literal))
            if end < start:
                raise PlanError(f"range_({a.args[0]}, {a.args[1]}) of {function} is empty: its end comes "
                                f"before its start among columns {names}")
            chosen.update(names[start:end + 1])
        else:
            raise PlanError(f"{function} takes columns, positions or range_(...), got {a}")
    return [n for n in names if n in chosen]


def _known(names: list[str], name: str, what: str) -> str:
    if name not in names:
        raise PlanError(f"column {name!r} of {what} not found; available columns: {', '.join(names)}")
    return name


def _position(names: list[str], value: object, what: str) -> int:
    """The 0-based index of a column named or numbered (1-based) by ``value``."""
    if isinstance(value, str):
        return names.index(_known(names, value, what))
    if isinstance(value, int) and not isinstance(value, bool) and 1 <= value <= len(names):
        return value - 1
    raise PlanError(f"{what}: column position {value!r} is out of range 1..{len(names)}")


def drop_columns(plan: PlanNode, exprs: list[Expression]) -> PlanNode:
    """Every column but those named (``col('a')``, ``with_columns(...)``)."""
    dropped: list[str] = []
    for e in expand(plan, exprs):
        if not isinstance(e, Column):
            raise PlanError(f"drop_columns takes column references, got {e}")
        dropped.append(_known(plan.field_names, e.name, "drop_columns"))
    return builder.project(plan, [Column(n) for n in plan.field_names if n not in dropped])


def rename_columns(plan: PlanNode, exprs: list[Expression]) -> PlanNode:
    """The columns, those given as ``col('a').alias('b')`` renamed."""
    renames: dict[str, str] = {}
    for e in exprs:
        if not isinstance(e, Alias) or not isinstance(strip_alias(e), Column):
            raise PlanError(f"rename_columns takes col('name').alias('new_name') expressions, got {e}")
        renames[_known(plan.field_names, strip_alias(e).name, "rename_columns")] = e.name  # type: ignore[attr-defined]
    items: list[Expression] = [Alias(Column(n), renames[n]) if n in renames else Column(n) for n in plan.field_names]
    return builder.project(plan, items)


def add_or_replace_columns(plan: PlanNode, exprs: list[Expression]) -> PlanNode:
    """The columns with ``exprs`` added; one named as an existing column replaces it in place,
    and of two added with one name the last wins (as Flink)."""
    added: dict[str, Expression] = {}
    for i, e in enumerate(expand(plan, exprs)):
        if e.contains_aggregate():
            raise PlanError(f"add_or_replace_columns cannot contain aggregates, got {e}")
        added[e.output_name() or f"_c{i}"] = e
    items: list[Expression] = []
    for n in plan.field_names:
        items.append(_named(added.pop(n), n) if n in added else Column(n))
    items.extend(_named(e, n) for n, e in added.items())
    return builder.project(plan, items)


def _named(e: Expression, name: str) -> Expression:
    return e if e.output_name() == name else Alias(strip_alias(e), name)
