"""Builders for join kernel tests: two sides of ``(k, v)`` rows, joined on ``k = k0``."""

from __future__ import annotations

from changeflow.common.row import Row
from changeflow.common.row_kind import RowKind
from changeflow.kernels.join import StreamingJoin
from changeflow.testing.harness import KernelHarness

COLUMNS = ["_side", "k", "v", "k0", "v0"]


def make_join(join_type: str, condition=None, *, mini_batch: bool = False, left_unique_key=None,
              right_unique_key=None) -> KernelHarness:
    kernel = StreamingJoin(join_type, ["k", "v"], ["k0", "v0"], ["k"], ["k0"], condition,
                           key_dtypes=["Int64"],
                           dtypes={c: "object" if c in ("v", "v0") else "Int64" for c in COLUMNS[1:]},
                           mini_batch=mini_batch, left_unique_key=left_unique_key, right_unique_key=right_unique_key,
                           vector_min_rows=0)  # the tests' small batches take the vectorised path where it applies
    return KernelHarness(kernel, COLUMNS, dtypes={"_side": "int8", "k": "Int64", "k0": "Int64",
                                                   "v": object, "v0": object})


def left(kind: str, k, v) -> Row:
    """A change of the left input, e.g. ``left("+I", 1, "a")``."""
    return Row.of(RowKind.from_short_string(kind), (0, k, v, None, None))


def right(kind: str, k, v) -> Row:
    """A change of the right input."""
    return Row.of(RowKind.from_short_string(kind), (1, None, None, k, v))
