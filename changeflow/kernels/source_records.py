"""A DataStream source's rows as records (``_value``, ``_ord``): the encoders Spark's ``mapInPandas`` runs.

Each input frame holds a source's rows followed by their position in the
source (a column the runtime adds); the stamp of a record is that position
and the source's number (:func:`~changeflow.kernels.keyed.records.source_stamp`).
No Spark import.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from changeflow.common.row import Row
from changeflow.kernels.keyed.records import ORD, VALUE, dumps, source_stamp

__all__ = ["LineEncoder", "RowEncoder"]


class LineEncoder:
    """Text lines (with their position) to records."""

    def __init__(self, number: int) -> None:
        self.number = number

    def __call__(self, frames):
        for f in frames:
            if len(f):
                yield pd.DataFrame({
                    VALUE: np.asarray([dumps(v) for v in f.iloc[:, 0]], dtype=object),
                    ORD: np.asarray([source_stamp(int(p), self.number) for p in f.iloc[:, 1]], dtype=object)})


class RowEncoder:
    """Spark rows to named :class:`Row` records."""

    def __init__(self, columns: list[str], number: int, ordered: bool) -> None:
        self.columns = list(columns)
        self.number = number
        self.ordered = ordered

    def __call__(self, frames):
        n = len(self.columns)
        for f in frames:
            if not len(f):
                continue
            data = f.iloc[:, :n].astype(object).where(f.iloc[:, :n].notna(), None)
            values = [dumps(Row(**dict(zip(self.columns, r)))) for r in data.itertuples(index=False, name=None)]
            positions = f.iloc[:, n] if self.ordered else [0] * len(f)
            yield pd.DataFrame({VALUE: np.asarray(values, dtype=object),
                                ORD: np.asarray([source_stamp(int(p), self.number) for p in positions],
                                                dtype=object)})
