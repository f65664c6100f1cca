"""Window Top-N, window deduplication and window join in the plan (Flink's window operators).

A ``ROW_NUMBER()`` rank or a join whose inputs are *windowed* (their
``window_start`` and ``window_end`` come from a window TVF, a window aggregation
or another window operator, :func:`window_columns`) runs, in a streaming query, as
one of Flink's window operators rather than as a regular Top-N or join:

- :class:`WindowRank`: ``ROW_NUMBER() OVER (PARTITION BY window_start, window_end[,
  keys] ORDER BY ...) <= N``; each window's top rows are emitted once, insert-only,
  when the watermark passes the window's end (Flink's ``WindowRank``);
- :class:`WindowDeduplicate`: the same with ``= 1`` and a single ``ORDER BY`` on a
  rowtime attribute: each window's first (``ASC``) or last (``DESC``) row per key
  (Flink's ``WindowDeduplicate``);
- :class:`WindowJoin`: two windowed inputs joined ``ON`` their equal ``window_start``
  and ``window_end`` (of the same window) and other keys: each window's pairs are
  emitted when the watermark passes its end (Flink's ``WindowJoin``).

Rows of a window the watermark has passed are late and dropped by all three.
The rules :mod:`~changeflow.plan.rules.window_rank` and
:mod:`~changeflow.plan.rules.window_join` pick them; a batch plan keeps the
regular operators (over bounded input they give the same rows).
"""

from __future__ import annotations

from dataclasses import dataclass

from changeflow.plan.event_time import WindowAggregate, WindowSpec, window_lineage
from changeflow.plan.nodes import Filter, Join, PlanNode, Project, RankFields, _InputSchema, _OneInput

# Role -> output column of a windowed node: "window_start", "window_end" (and "window_time").
Roles = dict[str, tuple[str, WindowSpec]]


@dataclass(frozen=True, eq=False)
class WindowRank(RankFields):
    """Window Top-N: ``ROW_NUMBER() OVER (PARTITION BY window_start, window_end, partition_keys ...)``.

    ``partition_keys`` are the other PARTITION BY columns (the window's start and
    end, ``window_start``/``window_end`` as the input names them, are implied).
    Fields otherwise as :class:`~changeflow.plan.nodes.RankFields`; not a
    :class:`~changeflow.plan.nodes.Rank` (no regular Top-N rule applies to it).
    """

    window: WindowSpec
    window_start: str
    window_end: str


@dataclass(frozen=True, eq=False)
class WindowDeduplicate(_OneInput, _InputSchema):
    """Window deduplication: per window and ``keys``, the row first (``keep_last`` False) or last by ``order``.

    ``order`` names the rowtime attribute of the ``ORDER BY``. Output: the input's columns.
    """

    input: PlanNode
    keys: tuple[str, ...]
    keep_last: bool
    order: str
    window: WindowSpec
    window_start: str
    window_end: str


@dataclass(frozen=True, eq=False)
class WindowJoin(Join):
    """A :class:`~changeflow.plan.nodes.Join` of two windowed inputs on the same window.

    ``left_keys``/``right_keys`` are the equi-join keys without the window columns;
    ``left_window``/``right_window`` name each input's ``(window_start, window_end)``
    (in its own names); ``condition`` is the rest of ON, as for a regular join.
    """

    window: WindowSpec | None = None
    left_window: tuple[str, str] = ("", "")
    right_window: tuple[str, str] = ("", "")


def window_columns(node: PlanNode) -> Roles:
    """The window columns of ``node`` by output name: ``{name: (role, window)}``.

    As :func:`~changeflow.plan.event_time.window_lineage` (window TVFs through filters
    and projections), and also through what keeps a window's columns as Flink's
    window properties do: a window aggregation's window keys, a window Top-N or
    deduplication, and a window join's two sides.
    """
    if isinstance(node, WindowAggregate):
        below = window_columns(node.input)
        names = node.field_names
        return {names[i]: below[k] for i, k in enumerate(node.keys) if k in below}
    if isinstance(node, (WindowRank, WindowDeduplicate)):
        return window_columns(node.input)
    if isinstance(node, WindowJoin):
        left = len(node.left.field_names)
        names = node.field_names
        out: Roles = {}
        for offset, side in ((0, node.left), (left, node.right)):
            below = window_columns(side)
            out.update({names[offset + i]: below[n] for i, n in enumerate(side.field_names) if n in below})
        return out
    if isinstance(node, Filter):
        return window_columns(node.input)
    if isinstance(node, Project):
        below = window_columns(node.input)
        from changeflow.expressions import Column

        return {n: below[e.name] for n, e in node.exprs if isinstance(e, Column) and e.name in below}
    return window_lineage(node)


def window_of(columns: tuple[str, ...] | list[str], roles: Roles) -> tuple[WindowSpec, str, str] | None:
    """The window whose start and end are both among ``columns``, with their names, or None."""
    starts = [(c, roles[c][1]) for c in columns if c in roles and roles[c][0] == "window_start"]
    ends = [(c, roles[c][1]) for c in columns if c in roles and roles[c][0] == "window_end"]
    for start, window in starts:
        for end, other in ends:
            if window == other:
                return window, start, end
    return None


def describe_window(window: WindowSpec, start: str, end: str) -> str:
    """A window with its columns as Flink's window operators print it: ``TUMBLE(win_start=[..], win_end=[..], ..)``."""
    return str(window).replace("(", f"(win_start=[{start}], win_end=[{end}], ", 1)


def describe_window_op(node: PlanNode) -> str:
    """A window Top-N, deduplication or join as Flink's EXPLAIN names it."""
    if isinstance(node, (WindowRank, WindowDeduplicate)):
        window = describe_window(node.window, node.window_start, node.window_end)
    if isinstance(node, WindowRank):
        order = ", ".join(f"{c} {'ASC' if asc else 'DESC'}" for c, asc, _ in node.order_by)
        return (f"WindowRank(window=[{window}], rankType=[ROW_NUMBER], rankRange=[rankStart={node.rank_start}, "
                f"rankEnd={node.rank_end}], partitionBy=[{', '.join(node.partition_keys)}], orderBy=[{order}], "
                f"select=[{', '.join(node.field_names)}])")
    if isinstance(node, WindowDeduplicate):
        keep = "LastRow" if node.keep_last else "FirstRow"
        return (f"WindowDeduplicate(window=[{window}], keep=[{keep}], partitionKeys=[{', '.join(node.keys)}], "
                f"orderKey=[{node.order}], order=[ROWTIME])")
    assert isinstance(node, WindowJoin) and node.window is not None
    names = node.field_names
    right_out = dict(zip(node.right.field_names, names[len(node.left.schema):], strict=True))
    parts = [f"({lk} = {right_out[rk]})" for lk, rk in zip(node.left_keys, node.right_keys, strict=True)]
    if node.condition is not None:
        parts.append(str(node.condition))
    where = parts[0] if len(parts) == 1 else "(" + " AND ".join(parts) + ")" if parts else "true"
    kinds = {"INNER": "InnerJoin", "LEFT": "LeftOuterJoin", "RIGHT": "RightOuterJoin", "FULL": "FullOuterJoin"}
    return (f"WindowJoin(leftWindow=[{describe_window(node.window, *node.left_window)}], "
            f"rightWindow=[{describe_window(node.window, *node.right_window)}], "
            f"joinType=[{kinds[node.join_type]}], where=[{where}], select=[{', '.join(names)}])")


def exchange_keys(node: PlanNode) -> tuple[str, ...]:
    """The columns a window operator's input is distributed by (Flink's Exchange: without the window)."""
    if isinstance(node, WindowRank):
        return node.partition_keys
    if isinstance(node, WindowDeduplicate):
        return node.keys
    raise TypeError(f"not a one-input window operator: {type(node).__name__}")


WINDOW_OPERATORS = (WindowRank, WindowDeduplicate, WindowJoin)

__all__ = ["WINDOW_OPERATORS", "WindowDeduplicate", "WindowJoin", "WindowRank", "describe_window",
           "describe_window_op", "exchange_keys", "window_columns", "window_of"]
