"""Shared builders for the group-aggregate kernel tests."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from changeflow.common.types import DataType, DataTypes
from changeflow.kernels.aggregate import AggCall, GroupAggregate
from changeflow.testing import KernelHarness, assert_changelog

BIGINT = DataTypes.BIGINT()
INT = DataTypes.INT()
DOUBLE = DataTypes.DOUBLE()
STRING = DataTypes.STRING()


def call(function: str, arg_type: DataType | None = BIGINT, *, arg: str | None = "v", out: str | None = None,
         **kw) -> AggCall:
    """``call("sum")`` is SUM(v) AS sum over a BIGINT column ``v``."""
    if function == "count_star":
        arg, arg_type = None, None
    return AggCall(function, arg, arg_type, out or function, **kw)


def harness(calls: list[AggCall], *, mini_batch: bool = False, insert_only: bool = False,
            keys: tuple[str, ...] = ("k",), columns: tuple[str, ...] = ("k", "v"),
            dtypes: dict[str, Any] | None = None) -> KernelHarness:
    kernel = GroupAggregate(list(keys), calls, mini_batch=mini_batch, input_insert_only=insert_only)
    return KernelHarness(kernel, list(columns), dtypes=dtypes or {"k": object, "v": _dtype(calls)})


def _dtype(calls: list[AggCall]) -> Any:
    types = {c.arg_type.root for c in calls if c.arg_type is not None}
    if types <= {"BIGINT", "INT", "SMALLINT", "TINYINT"}:
        return "Int64"
    if types <= {"DOUBLE", "FLOAT"}:
        return "Float64"
    return object


@dataclass
class Scenario:
    """A named, table-driven kernel test: batches in, exact changelog out.

    ``batches`` is a list of batches (each a list of records); ``expected`` the
    whole changelog emitted over all batches.
    """

    name: str
    calls: list[AggCall]
    batches: list[list]
    expected: list
    mini_batch: bool = False
    insert_only: bool = False
    options: dict = field(default_factory=dict)

    def run(self) -> None:
        h = harness(self.calls, mini_batch=self.mini_batch, insert_only=self.insert_only, **self.options)
        out = []
        for batch in self.batches:
            out.extend(h.process(batch))
        assert_changelog(out, self.expected)

    def as_one_row_bundles(self) -> "Scenario":
        """The same input with mini-batch on and one row per bundle: a bundle of one
        row follows the per-row rules exactly, so the expected changelog is unchanged."""
        rows = [[r] for b in self.batches for r in b]
        return Scenario(self.name, self.calls, rows, self.expected, mini_batch=True,
                        insert_only=self.insert_only, options=self.options)


def ids(scenarios: list[Scenario]) -> list[str]:
    return [s.name for s in scenarios]
