"""Keys and bytes of one operator's paged state, from its stored pages (:mod:`.paged`).

Spark's own state metrics count state rows, which for changeflow are pages of a
few hundred keys, so they cannot show how many keys an operator keeps. This
module counts them from the pages themselves: ``summarize`` takes every
``(page id, blob)`` of an operator (read from a checkpoint by the runtime) and
gives the number of distinct keys over all the operator's tables, the bytes
stored, the pages and the rows of each table, and the rows an event-time
operator dropped as late (its ``late_records`` table: one row under the
all-null key per bucket, holding a count, which is not a key of the operator;
the other tables of :data:`~changeflow.kernels.state.BUCKET_TABLES`, kept the
same way, are not counted).

>>> import pickle
>>> import pandas as pd
>>> from changeflow.state.paged import INFO_PAGE
>>> info = pickle.dumps({"operator": "GroupAggregate", "key_columns": ["k"]})
>>> page = pickle.dumps({"acc": pd.DataFrame({"k": ["a", "b"], "n": [1, 2]}), "_ttl": pd.DataFrame({"k": ["a"]})})
>>> m = summarize([(INFO_PAGE, info), (0, page)])
>>> m.operator, m.keys, m.pages, m.rows
('GroupAggregate', 2, 1, {'acc': 2, '_ttl': 1})
"""

from __future__ import annotations

import pickle
from dataclasses import dataclass, field
from typing import Iterable

import pandas as pd

from changeflow.kernels.state import BUCKET_TABLES, LATE_RECORDS
from changeflow.state.paged import INFO_PAGE


@dataclass
class OperatorStateMetrics:
    """One stateful operator's state: distinct keys, bytes and pages stored, rows per table."""

    operator_id: int = -1
    operator: str | None = None      # the kernel's name (None for state written before names were kept)
    key_columns: list[str] = field(default_factory=list)
    keys: int | None = None          # distinct keys over every table (None when the key columns are unknown)
    bytes: int = 0                   # of the pickled pages, as stored
    pages: int = 0
    rows: dict[str, int] = field(default_factory=dict)
    late_records_dropped: int = 0    # rows an event-time operator dropped as late (Flink's numLateRecordsDropped)

    def as_dict(self) -> dict:
        return {"operator_id": self.operator_id, "operator": self.operator, "key_columns": self.key_columns,
                "keys": self.keys, "bytes": self.bytes, "pages": self.pages, "rows": dict(sorted(self.rows.items())),
                "late_records_dropped": self.late_records_dropped}


def summarize(pages: Iterable[tuple[int, bytes]], operator_id: int = -1) -> OperatorStateMetrics:
    """The metrics of one operator from all its ``(page id, blob)`` pairs (every bucket's)."""
    metrics = OperatorStateMetrics(operator_id)
    keys: list[pd.DataFrame] = []
    data: list[dict] = []
    for page_id, blob in pages:
        metrics.bytes += len(blob)
        if page_id == INFO_PAGE:
            info = pickle.loads(blob)
            metrics.operator, metrics.key_columns = info["operator"], list(info["key_columns"])
        elif page_id >= 0:  # the growing pages' directory (-1) holds no rows
            metrics.pages += 1
            data.append(pickle.loads(blob))
    for page in data:
        for table, frame in page.items():
            if table in BUCKET_TABLES:
                if table == LATE_RECORDS:
                    metrics.late_records_dropped += int(frame["records"].sum()) if len(frame) else 0
                continue
            metrics.rows[table] = metrics.rows.get(table, 0) + len(frame)
            if metrics.key_columns and set(metrics.key_columns) <= set(frame.columns):
                keys.append(frame[metrics.key_columns])
    if metrics.key_columns:
        metrics.keys = len(pd.concat(keys, ignore_index=True).drop_duplicates()) if keys else 0
    return metrics
