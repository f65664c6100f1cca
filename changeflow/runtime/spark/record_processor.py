"""The DataStream runtime's side of the one kernel processor: its records in, its records out.

A keyed DataStream operator's kernel (:mod:`changeflow.kernels.keyed`) runs in
the same :class:`~.processor.KernelProcessor` as every other kernel, timers and
flush buffer included (the processor hosts any kernel through the kernel
contract). Only the encoding differs: DataStream records cross Spark as
``(_value, _ord)`` (:mod:`changeflow.kernels.keyed.records`), so
:class:`RecordKernelProcessor` turns what the processor emits (records,
flushed records, control rows) into records, and :class:`BatchKeyed` runs a
kernel's batch algorithm in batch mode.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from changeflow.kernels.changelog import KIND, SEQ, SUB
from changeflow.kernels.contract import Kernel
from changeflow.kernels.keyed.records import CONTROL_VALUE, KEY, ORD, VALUE, control_stamp
from changeflow.runtime.spark.end_of_input import CONTROL
from changeflow.runtime.spark.processor import KernelProcessor


def to_records(frame: pd.DataFrame) -> pd.DataFrame:
    """A processor's output as ``(_value, _ord)`` records; control rows become control records.

    >>> from changeflow.kernels.keyed.records import parse_control_stamp
    >>> from changeflow.runtime.spark.end_of_input import Control, control_rows
    >>> rows = control_rows([KEY, VALUE, ORD], Control(frozenset({3})))
    >>> [parse_control_stamp(s) for s in to_records(rows)[ORD]], to_records(rows)[VALUE].tolist()
    ([(-1, 3)], [b''])
    """
    if KIND not in frame.columns:
        return frame[[VALUE, ORD]]
    control = frame[KIND].to_numpy() == CONTROL
    values = frame[VALUE].to_numpy(dtype=object).copy()
    stamps = frame[ORD].to_numpy(dtype=object).copy()
    seqs, subs = frame[SEQ].to_numpy(), frame[SUB].to_numpy()
    for i in np.flatnonzero(control):
        values[i] = CONTROL_VALUE
        stamps[i] = control_stamp(int(seqs[i]), int(subs[i]))
    return pd.DataFrame({VALUE: values, ORD: stamps})


class RecordKernelProcessor(KernelProcessor):
    """A :class:`KernelProcessor` whose output goes out as records (flushed records, control records)."""

    def emit(self, frame: pd.DataFrame) -> pd.DataFrame:
        return to_records(frame)


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
        batch.columns = [KEY, VALUE, ORD]
        yield self.kernel.process_bounded(batch)
