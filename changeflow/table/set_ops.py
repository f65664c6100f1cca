"""The Table API's set operations: ``union``, ``union_all``, ``intersect``, ``intersect_all``,
``minus``, ``minus_all`` and ``distinct``, planned as SQL's (:mod:`changeflow.plan.set_ops`).

As in PyFlink, ``union`` removes duplicates (SQL ``UNION``) and ``union_all`` keeps
them; ``minus`` is SQL ``EXCEPT``. As in Flink's Table API, all but ``union_all``
(and ``distinct``) are batch-only: in streaming mode they are refused with Flink's
message (SQL's set operations do run in streaming mode). Both tables must come from the same
environment and have the same number of columns; the result has the left
table's column names and, per column, the least restrictive type of the two.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from changeflow.plan import set_ops
from changeflow.plan.nodes import PlanNode
from changeflow.plan.type_inference import PlanError

if TYPE_CHECKING:
    from changeflow.table.table import Table

# Table API method -> (SQL operation, ALL)
METHODS = {
    "union": ("UNION", False), "union_all": ("UNION", True),
    "intersect": ("INTERSECT", False), "intersect_all": ("INTERSECT", True),
    "minus": ("EXCEPT", False), "minus_all": ("EXCEPT", True),
}


def set_operation(method: str, left: "Table", right: "Table") -> PlanNode:
    """The plan of ``left.<method>(right)``."""
    operation, all_ = METHODS[method]
    if not hasattr(right, "plan") or not hasattr(right, "_t_env"):
        raise TypeError(f"{method}() needs a Table, got {right!r}")
    if right._t_env is not left._t_env:
        raise PlanError(f"Only tables from the same TableEnvironment can be used in {method}()")
    if method != "union_all" and left._t_env.streaming:
        # Flink's Table API runs these in batch mode only (its SQL runs them in streaming too).
        word = "MINUS" if operation == "EXCEPT" else operation
        raise PlanError(f"The {word} operation on two unbounded tables is currently not supported. "
                        f"(Table.{method}() runs in batch mode; in streaming mode use SQL's {operation}"
                        f"{' ALL' if all_ else ''})")
    return set_ops.set_operation(operation, all_, left.plan, right.plan)


def distinct(table: "Table") -> PlanNode:
    """``SELECT DISTINCT *`` of ``table``."""
    return set_ops.distinct(table.plan)
