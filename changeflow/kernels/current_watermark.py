"""``CURRENT_WATERMARK(ts)``: each row stamped with the watermark its operator has seen before it.

Flink evaluates ``CURRENT_WATERMARK`` in the Calc that holds it: the value is
the last watermark that reached the Calc before the row (NULL before the
first). changeflow's Calc is a stateless Spark column, which cannot know that
watermark across micro-batches, so a query calling the function runs its
input through this kernel first: an event-time kernel with no state of its
own whose host applies each watermark after the rows before its position
(``runtime/spark/processor.py``) and sets ``current_watermark`` before every
call. It passes every row on with the watermark in :data:`COLUMN` (epoch ms,
or NULL), and the Calc's ``CURRENT_WATERMARK(ts)`` reads that column.
"""

from __future__ import annotations

import pandas as pd

from changeflow.kernels.changelog import KIND, SEQ, SUB
from changeflow.kernels.contract import MIN_WATERMARK, KernelBase
from changeflow.kernels.state import KeyedState

COLUMN = "__current_watermark"
"""The hidden column a stamped row carries its watermark in (epoch ms; NULL before the first)."""


class CurrentWatermarkStamp(KernelBase):
    """Pass rows (any row kind) on with :data:`COLUMN`: the operator's watermark before each row."""

    event_time = True

    def __init__(self, columns: list[str]) -> None:
        self.columns = list(columns)

    @property
    def operator_name(self) -> str:
        return "Calc"

    def process(self, batch: pd.DataFrame, state: KeyedState) -> pd.DataFrame | None:
        if not len(batch):
            return None
        out = pd.DataFrame(batch.loc[:, self.columns + [KIND, SEQ, SUB]]).reset_index(drop=True)
        watermark = None if self.current_watermark == MIN_WATERMARK else int(self.current_watermark)
        out[COLUMN] = pd.array([watermark] * len(out), dtype="Int64")
        return out

    def on_watermark(self, watermark: int, state: KeyedState) -> pd.DataFrame | None:
        return None   # nothing waits for a watermark here: the host moves current_watermark on


__all__ = ["COLUMN", "CurrentWatermarkStamp"]
