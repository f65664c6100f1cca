"""``order_by`` / ``offset`` / ``fetch`` / ``limit`` of the Table API: a :class:`~changeflow.plan.nodes.Sort`.

The planner keeps it a sort in batch mode and makes it a Top-N (or refuses it)
in streaming mode (:mod:`changeflow.plan.rules.sort_limit`). Ordering by an
expression other than a column computes it as a hidden column, sorted on and
projected away. ``ASC`` puts NULLs last and ``DESC`` first: Flink's default null
order (NULL sorts as the greatest value; measured with PyFlink 2.3, batch mode).
"""

from __future__ import annotations

from dataclasses import replace

from changeflow.expressions import Call, Column, Expression, strip_alias
from changeflow.plan import builder
from changeflow.plan.nodes import PlanNode, Project, Sort
from changeflow.plan.type_inference import PlanError


def order_by(plan: PlanNode, exprs: list[Expression]) -> PlanNode:
    """``ORDER BY exprs`` (each a column or expression, optionally ``.asc`` / ``.desc``)."""
    if not exprs:
        raise PlanError("order_by needs at least one expression")
    keys: list[tuple[Expression, bool]] = []
    for e in exprs:
        e = strip_alias(e)
        ascending = True
        if isinstance(e, Call) and e.function in ("asc", "desc"):
            ascending, e = e.function == "asc", e.args[0]
        keys.append((e, ascending))
    hidden = [(f"$order{i}", e) for i, (e, _) in enumerate(keys) if not isinstance(e, Column)]
    base = plan
    if hidden:
        names = dict((id(e), n) for n, e in hidden)
        items: list[Expression] = [Column(n) for n in plan.field_names]
        base = builder.project(plan, items + [e.alias(n) for n, e in hidden])
        keys = [(Column(names[id(e)]) if id(e) in names else e, asc) for e, asc in keys]
    columns = base.field_names
    order = []
    for e, asc in keys:
        assert isinstance(e, Column)
        if e.name not in columns:
            raise PlanError(f"column {e.name!r} of order_by not found; available columns: "
                            f"{', '.join(plan.field_names)}")
        order.append((e.name, asc, not asc))  # NULLS LAST for ASC, FIRST for DESC
    sort = Sort(base, tuple(order))
    return builder.project(sort, [Column(n) for n in plan.field_names]) if hidden else sort


def _sort_below(plan: PlanNode) -> tuple[Sort | None, Project | None]:
    """The Sort ``plan`` ends with, looking through the projection that hides computed sort keys."""
    if isinstance(plan, Sort):
        return plan, None
    if isinstance(plan, Project) and isinstance(plan.input, Sort) and \
            all(isinstance(e, Column) and e.name == n for n, e in plan.exprs):
        return plan.input, plan
    return None, None


def _with_sort(plan: PlanNode, offset: int | None = None, fetch: int | None = None) -> PlanNode:
    sort, hiding = _sort_below(plan)
    if sort is None:
        return Sort(plan, (), offset or 0, fetch)
    changes = {"offset": offset} if offset is not None else {"fetch": fetch}
    updated = replace(sort, **changes)
    return updated if hiding is None else replace(hiding, input=updated)


def offset(plan: PlanNode, n: int) -> PlanNode:
    """Skip the first ``n`` rows (of the order a preceding ``order_by`` gives)."""
    if not isinstance(n, int) or n < 0:
        raise PlanError(f"OFFSET must be a non-negative integer, got {n!r}")
    sort, _ = _sort_below(plan)
    if sort is not None and sort.fetch is not None:
        raise PlanError("FETCH is already defined.")
    if sort is not None and sort.offset:
        raise PlanError("OFFSET is already defined.")
    return _with_sort(plan, offset=n)


def fetch(plan: PlanNode, n: int) -> PlanNode:
    """Keep the first ``n`` rows (after the offset)."""
    if not isinstance(n, int) or n < 0:
        raise PlanError(f"FETCH count must be equal or larger than 0, got {n!r}")
    sort, _ = _sort_below(plan)
    if sort is not None and sort.fetch is not None:
        raise PlanError("FETCH is already defined.")
    return _with_sort(plan, fetch=n)
