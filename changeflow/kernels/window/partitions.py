"""Per-partition steps of DataStream operators that output only after end of input (FLIP-331).

The functions the Spark runtime hands to ``mapInPandas``
(:mod:`changeflow.runtime.spark.end_of_stream`), pure pandas work:
:class:`Prepare` runs the fused stateless chain and key selector over a
partition's input (records, or a bounded DataFrame's own rows);
:class:`Combine` folds a partition into one partial per key (a map-side
combine); :class:`FireGroups` / :class:`ProcessGroups` evaluate each complete
key group of a partition sorted by key (:mod:`.groups`); :class:`Discard`
runs a never-firing window's input functions and passes only control rows.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from changeflow.kernels import chain
from changeflow.kernels.chain import ChainRunner
from changeflow.kernels.keyed.process import KeyedProcess
from changeflow.kernels.keyed.records import KEY, RECORD_COLUMNS, control_mask, decode, dumps, records_of
from changeflow.kernels.order import STAMP, Stamp, source_stamp, stamps_of
from changeflow.kernels.source_records import named_rows
from changeflow.kernels.window.evaluate import PartialFold, WindowKernel
from changeflow.kernels.window.groups import complete_groups

__all__ = ["Combine", "Discard", "FireGroups", "Prepare", "ProcessGroups"]


class Prepare:
    """A partition's input as Python values, through the fused stateless chain and the key selector.

    ``columns``/``source`` describe a bounded Spark DataFrame read directly (its
    columns, then ``__position``; the source's number for the stamps); without
    them the input is a record frame.
    """

    def __init__(self, ops: list[Any], columns: list[str] | None = None, source: int = 0) -> None:
        self.ops = ops
        self.fields = tuple(columns) if columns is not None else None
        self.source = source

    @property
    def positions(self) -> bool:
        """Whether stamps may stay plain source positions (ints) until :meth:`stamp`: a DataFrame
        source and no fan-out in the chain (a fan-out extends stamps)."""
        return self.fields is not None and all(op.kind in ("map", "filter", "key") for op in self.ops)

    def stamp(self, stamp: Any) -> Stamp:
        return source_stamp(stamp, self.source) if isinstance(stamp, int) else stamp

    def __call__(self, frame: pd.DataFrame) -> tuple[list[bytes], list, list]:
        """``(pickled keys, values, stamps)`` of ``frame``'s records after the chain (stamps: see :attr:`positions`)."""
        if self.fields is None:
            # By position: _value, _kind, _seq, _sub; a Row's kind is its record's _kind.
            values = [decode(v, k) for v, k in zip(frame.iloc[:, 0], frame.iloc[:, 1].tolist(), strict=True)]
            stamps = stamps_of(frame.iloc[:, 2:4].set_axis(STAMP, axis=1))
        else:
            n = len(self.fields)
            values = named_rows(frame, self.fields)
            stamps = frame.iloc[:, n].tolist()
            if not self.positions:
                stamps = [source_stamp(p, self.source) for p in stamps]
        values, stamps, keys = chain.run(self.ops, values, stamps)
        assert keys is not None  # the runtime ends a Prepare's ops with the operator's key selector
        return [dumps(k) for k in keys], values, stamps

    def keyed_records(self, frames):
        """``mapInPandas``: keyed record frames (``_key``, ``_value``, ``_seq``, ``_sub``)."""
        for frame in frames:
            if len(frame):
                keys, values, stamps = self(frame)
                yield records_of(values, [self.stamp(s) for s in stamps], keys)


class Combine:
    """``mapInPandas``: the fused chain and key selector, then one partial per key of the partition."""

    def __init__(self, prepare: Prepare, kernel: WindowKernel) -> None:
        self.prepare = prepare
        self.kernel = kernel

    def __call__(self, frames):
        fold = PartialFold(self.kernel)
        for frame in frames:
            if len(frame):
                fold.add_values(*self.prepare(frame))
        if fold.partials:
            yield fold.result(self.prepare.stamp)


class FireGroups:
    """``mapInPandas`` over a partition sorted by key: the kernel fires each complete key group."""

    def __init__(self, kernel: Any, columns: list[str]) -> None:
        self.kernel = kernel
        self.columns = list(columns)

    def __call__(self, frames):
        for groups in complete_groups(self._named(frames), KEY):
            out = self.kernel.fire(groups)
            if len(out):
                yield out

    def _named(self, frames):
        # Spark may rename columns starting with "_": restore the names by position.
        for frame in frames:
            frame.columns = self.columns
            yield frame


class ProcessGroups(FireGroups):
    """A KeyedProcessFunction in batch: each key's input, then every timer of the key (Flink's batch execution)."""

    def __init__(self, kernel: KeyedProcess) -> None:
        super().__init__(kernel, [KEY] + RECORD_COLUMNS)

    def __call__(self, frames):
        for groups in complete_groups(self._named(frames), KEY):
            out = self.kernel.process_bounded(groups)
            if len(out):
                yield out[RECORD_COLUMNS]


class Discard:
    """``mapInPandas`` of a window that never fires: runs the chain and key selector, emits only control rows."""

    def __init__(self, runners: list[ChainRunner]) -> None:
        self.runners = runners

    def __call__(self, frames):
        for frame in frames:
            if not len(frame):
                continue
            for runner in self.runners:
                runner.process(frame)
            control = control_mask(frame.set_axis(RECORD_COLUMNS, axis=1))  # by position, as Spark sends them
            if control.any():
                passed = frame.loc[control].iloc[:, :len(RECORD_COLUMNS)]
                passed.columns = RECORD_COLUMNS
                yield passed
