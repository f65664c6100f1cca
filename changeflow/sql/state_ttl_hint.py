"""The ``STATE_TTL`` query hint (Flink 1.19+): a state TTL per join input and per group aggregation.

``SELECT /*+ STATE_TTL('o' = '1d', 'c' = '12h') */ ... FROM orders o JOIN customers c ON ...``
gives the join's left input (``o``) a state TTL of one day and its right input
twelve hours; ``SELECT /*+ STATE_TTL('orders' = '1d') */ k, SUM(v) FROM orders
GROUP BY k`` gives the aggregation one day. The hint overrides
``table.exec.state.ttl`` for those operators only; an input it does not name keeps
the global TTL. The rules follow Flink's:

* an option's key is the name of an input of an operator of the same query
  block (a SELECT): the alias of a table or subquery of the FROM clause, or the
  table's (or view's) name when it has no alias;
* it reaches the block's regular joins (each input side that is a named relation;
  in ``a JOIN b JOIN c`` the second join's left input is the first join, which
  has no name) and the block's group aggregation when the FROM clause is a single
  relation (its input); not the joins or aggregations of a subquery, nor a
  deduplication or Top-N;
* a key that matches no such input fails the query, with Flink's message
  ("The options of following hints cannot match the name of input tables or
  views");
* values are durations as Flink writes them (``'1d'``, ``'12 h'``, ``'500 ms'``).

Other query hints (``BROADCAST``, ``LOOKUP``, ...) are refused: changeflow does
not implement them, and a hint must not be ignored silently.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

from sqlglot import exp

from changeflow.config.durations import to_millis
from changeflow.plan.nodes import Aggregate, Filter, Join, PlanNode, Project, side_inputs
from changeflow.sql.errors import SqlError, located, unsupported

if TYPE_CHECKING:
    from changeflow.sql.planner import QueryPlanner

HINT = "STATE_TTL"


def apply_query_hints(planner: "QueryPlanner", select: exp.Select, from_plan: PlanNode, plan: PlanNode) -> PlanNode:
    """``plan`` (the SELECT's plan) with the TTLs of the SELECT's ``STATE_TTL`` hint on its operators.

    ``from_plan`` is the plan of the SELECT's FROM clause (its joins on top).
    """
    hint = select.args.get("hint")
    if hint is None:
        return plan
    ttls = _options(planner, hint)
    if not ttls:
        return plan
    names = _relation_names(select)
    used: set[str] = set()
    changes: dict[int, dict] = {}

    def ttl_of(name: str | None) -> int | None:
        if name is None or name not in ttls:
            return None
        used.add(name)
        return ttls[name]

    joins = _spine_joins(from_plan)
    if len(joins) != len(names) - 1:
        raise SqlError(located(f"{HINT} hint on a FROM clause whose joins changeflow plans otherwise "
                               f"({len(names) - 1} joins, {len(joins)} regular joins) is not supported",
                               hint, planner.sql))
    for i, join in enumerate(joins):
        left, right = ttl_of(names[0] if i == 0 else None), ttl_of(names[i + 1])
        if left is not None or right is not None:
            changes[id(join)] = {"left_ttl_ms": left, "right_ttl_ms": right}
    inside = _subtree_ids(from_plan)
    node = plan
    while id(node) not in inside and isinstance(node, (Project, Filter, Aggregate)):
        if isinstance(node, Aggregate):
            ttl = ttl_of(names[0] if not joins else None)
            if ttl is not None:
                changes[id(node)] = {"state_ttl_ms": ttl}
        node = node.input
    unknown = [name for name in ttls if name not in used]
    if unknown:
        # Flink's ValidationException text (FlinkHints / the hint resolver).
        raise SqlError(located("The options of following hints cannot match the name of input tables or views: "
                               f"\n`{', '.join(unknown)}` in `{HINT}`", hint, planner.sql))
    return _rebuild(plan, changes, {})


def _options(planner: "QueryPlanner", hint: exp.Hint) -> dict[str, int]:
    """The ``name -> ms`` options of the STATE_TTL hints; any other hint is refused."""
    out: dict[str, int] = {}
    for item in hint.expressions:
        name = item.name.upper() if isinstance(item, (exp.Anonymous, exp.Func)) else ""
        if name != HINT:
            raise unsupported("query hint", item, planner.sql)
        for option in item.expressions:
            if not (isinstance(option, exp.EQ) and isinstance(option.expression, exp.Literal)
                    and option.expression.is_string and isinstance(option.this, (exp.Literal, exp.Column))):
                raise SqlError(located(f"{HINT} hint options must be 'table' = 'duration', got {option.sql()}",
                                       option, planner.sql))
            key, value = option.this.name, option.expression.name
            try:
                out[key] = to_millis(value)
            except (ValueError, TypeError) as e:
                raise SqlError(located(f"{HINT} hint: invalid duration {value!r} for {key!r}: {e}",
                                       option, planner.sql)) from None
    return out


def _relation_names(select: exp.Select) -> list[str | None]:
    """The name of each relation of the FROM clause in order: the first, then each join's."""
    from_ = select.args.get("from") or select.args.get("from_")
    relations = ([from_.this] if from_ is not None else []) + [j.this for j in select.args.get("joins") or []]
    return [_name(r) for r in relations]


def _name(relation: exp.Expr) -> str | None:
    if isinstance(relation, exp.Table):
        return relation.alias or ".".join(p.name for p in relation.parts)
    return relation.alias or None  # a subquery is named by its alias only


def _spine_joins(from_plan: PlanNode) -> list[Join]:
    """The FROM clause's joins, first to last (each join's left input is the previous one)."""
    out = []
    node = from_plan
    while isinstance(node, Join):
        out.append(node)
        node = node.left
    return out[::-1]


def _subtree_ids(node: PlanNode) -> set[int]:
    ids: set[int] = set()
    stack = [node]
    while stack:
        n = stack.pop()
        if id(n) not in ids:
            ids.add(id(n))
            stack.extend(side_inputs(n))
    return ids


def _rebuild(node: PlanNode, changes: dict[int, dict], done: dict[int, PlanNode]) -> PlanNode:
    """``node`` with ``changes[id(n)]`` applied to each node ``n`` below it, sharing kept (``done``)."""
    if id(node) in done:
        return done[id(node)]
    updates = dict(changes.get(id(node), {}))
    for f in dataclasses.fields(node):
        value = getattr(node, f.name)
        if isinstance(value, PlanNode):
            new = _rebuild(value, changes, done)
            if new is not value:
                updates[f.name] = new
        elif isinstance(value, tuple) and value and all(isinstance(v, PlanNode) for v in value):
            new_values = tuple(_rebuild(v, changes, done) for v in value)
            if any(a is not b for a, b in zip(new_values, value, strict=True)):
                updates[f.name] = new_values
    result = dataclasses.replace(node, **updates) if updates else node
    done[id(node)] = result
    return result
