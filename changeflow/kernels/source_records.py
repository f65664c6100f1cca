"""A DataStream source's rows as records (``_value``, ``_seq``, ``_sub``): the encoders Spark's ``mapInPandas`` runs.

Each input frame holds a source's rows followed by their position in the
source (a column the runtime adds); the stamp of a record is that position
and the source's number (:func:`~changeflow.kernels.order.source_stamp`).
No Spark import.
"""

from __future__ import annotations

import pandas as pd

from changeflow.common.row import Row
from changeflow.common.row_kind import RowKind
from changeflow.kernels.keyed.records import dumps, record_frame
from changeflow.kernels.order import source_stamp

__all__ = ["LineEncoder", "RowEncoder", "named_rows", "python_values"]


def named_rows(frame: pd.DataFrame, fields: tuple[str, ...]) -> list[Row]:
    """The first ``len(fields)`` columns of ``frame`` as ``+I`` rows named ``fields``, nulls as None.

    >>> named_rows(pd.DataFrame({"a": [1.5, None], "b": ["x", "y"]}), ("a", "b"))
    [Row(a=1.5, b='x'), Row(a=None, b='y')]
    """
    columns = [python_values(frame.iloc[:, i]) for i in range(len(fields))]
    return [_row(values, fields) for values in zip(*columns, strict=True)]


def python_values(column: pd.Series) -> list:
    """A column's values as Python objects, nulls (NaN/NaT/None) as None, as a DataFrame source's records hold them."""
    if column.hasnans:
        return column.astype(object).where(column.notna(), None).tolist()
    return column.tolist()


def _row(values: tuple, fields: tuple[str, ...]) -> Row:
    # Row(**dict(zip(...))) per row costs twice as much: build the named row directly.
    row = tuple.__new__(Row, values)
    row._fields = fields
    row._row_kind = RowKind.INSERT
    return row


class LineEncoder:
    """Text lines (with their position) to records."""

    def __init__(self, number: int) -> None:
        self.number = number

    def __call__(self, frames):
        for f in frames:
            if len(f):
                yield record_frame([dumps(v) for v in f.iloc[:, 0].tolist()],  # Python ints
                                   [source_stamp(int(p), self.number) for p in f.iloc[:, 1]])


class RowEncoder:
    """Spark rows to named :class:`Row` records."""

    def __init__(self, columns: list[str], number: int, ordered: bool) -> None:
        self.columns = tuple(columns)
        self.number = number
        self.ordered = ordered

    def __call__(self, frames):
        n = len(self.columns)
        for f in frames:
            if not len(f):
                continue
            values = [dumps(r) for r in named_rows(f, self.columns)]
            positions = f.iloc[:, n] if self.ordered else [0] * len(f)
            yield record_frame(values, [source_stamp(int(p), self.number) for p in positions])
