"""The DataStream runtime's side of the one kernel processor: its records in, its records out.

A keyed DataStream operator's kernel (:mod:`changeflow.kernels.keyed`) runs in
the same :class:`~.processor.KernelProcessor` as every other kernel, timers and
flush buffer included (the processor hosts any kernel through the kernel
contract). Only the encoding differs: DataStream records cross Spark as
``(_value, _kind, _seq, _sub)`` (:mod:`changeflow.kernels.keyed.records`), so
:class:`RecordKernelProcessor` emits those columns of what the processor emits
(records, flushed records, control rows: the same bookkeeping as changes), and :class:`BatchKeyed` runs a
kernel's batch algorithm in batch mode.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from changeflow.kernels.contract import Kernel
from changeflow.kernels.keyed.records import KEY, RECORD_COLUMNS
from changeflow.runtime.spark.processor import KernelProcessor


class RecordKernelProcessor(KernelProcessor):
    """A :class:`KernelProcessor` whose output goes out as records (the pickled key stays behind)."""

    def emit(self, frame: pd.DataFrame) -> pd.DataFrame:
        return frame.loc[:, RECORD_COLUMNS]


class BatchKeyed:
    """Batch mode: a partition holds every record of its keys; the kernel's batch algorithm folds them.

    ``process_bounded`` (the kernel contract): a reduce emits each key's final
    value, a ``KeyedProcessFunction`` its outputs and then every timer of the key.
    """

    def __init__(self, kernel: Kernel) -> None:
        self.kernel = kernel

    def __call__(self, frames: Any):
        parts = [f for f in frames if len(f)]
        if not parts:
            return
        batch = pd.concat(parts, ignore_index=True)
        batch.columns = [KEY] + RECORD_COLUMNS
        yield self.kernel.process_bounded(batch)
