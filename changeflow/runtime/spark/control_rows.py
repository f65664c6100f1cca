"""Control rows: end of input and flush signals that reach every bucket of every stateful operator.

One mechanism and one encoding for both APIs: Table jobs carry changes (typed
columns and ``_kind/_seq/_sub``), DataStream jobs carry records (``_value`` and the
same ``_kind/_seq/_sub``: :mod:`changeflow.kernels.keyed.records`), and a control
row is the same in both: the payload columns null, its ``_kind``, ``_seq``, ``_sub``.

Structured Streaming has no end-of-input event: an ``availableNow`` query just
stops after its last data batch, and a stateful operator only runs for hash
buckets that received rows. Operators that must act when input ends (the flush
buffer of FLIP-365 flushes, FLIP-331's end-of-input operators emit their
result) therefore get the signal in band, as *control rows* of the changelog:

``_kind = 4`` (:data:`CONTROL`), every column null, and
``_seq = -1`` (:data:`END_OF_INPUT`)  with ``_sub`` the id of the source that ended
                                     (:func:`source_id` of its plan name), or
``_seq = -2`` (:data:`FLUSH`)         an upstream buffering operator flushed;

and a *watermark row* has ``_kind = WATERMARK + n`` (``n`` the number of its
watermark assigner in the query, :func:`~.event_time.assigner_numbers`),
``_seq`` the position it follows (the ``_seq`` of the row after which the
assigner emitted it) and ``_sub`` the watermark (ms). An event-time operator
applies a watermark after its input rows up to that position, as Flink's
operator sees the watermark after those records (:mod:`.event_time`); other
operators pass watermarks on. Every row with ``_kind >= CONTROL`` is a control
row (:func:`is_control`).

How a signal travels:

1. **Source.** A bounded source read as a stream (files written by
   :func:`~changeflow.runtime.spark.sources.stream_frame`) gets one more file after
   its data, holding one end-of-input row: a *marker micro-batch* of its own,
   since the source reads one file per micro-batch. Unbounded sources never end.
2. **Stateless operators** pass control rows through: projections compute nulls
   from nulls, and filters keep every control row.
3. **Packing stage.** :class:`ControlFanOut` wraps the packer of every stateful
   operator: it takes control rows out of the data and sends one
   :class:`Control` payload to *every* bucket of the operator (so each bucket's
   processor runs in that micro-batch, with or without data). While the
   operator buffers output it also sends an empty :class:`Control` (a *tick*)
   to every bucket whenever its partition had input, so each bucket knows
   whether the operator's input was idle in a micro-batch.
4. **Processor.** ``KernelProcessor`` strips control payloads before the kernel
   sees the batch. It records the sources that ended (in state), flushes a
   buffer on end of input or on an upstream flush, and passes the control on as
   one control row per signal, so the next operator's packing stage fans it out
   again. The kernel's ``flush(state)`` is called on an upstream flush and its
   ``end_of_input(state)`` once per bucket, after all sources upstream of the
   operator have ended (the kernel contract, :mod:`changeflow.kernels.contract`);
   what they return is emitted like any other output.
5. **Sink.** The translator drops control rows from the query's result.

Signals are idempotent (a bucket may receive the same one from several upstream
partitions), so duplicates are harmless.
"""

from __future__ import annotations

import pickle
import zlib
from dataclasses import dataclass, field
from typing import Any, Iterator

import numpy as np
import pandas as pd

import pyarrow as pa
from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from changeflow.kernels.changelog import CONTROL, KIND, SEQ, SUB
from changeflow.kernels.keyed.records import VALUE
from changeflow.runtime.spark.buckets import bucket_ids
from changeflow.runtime.spark.packing import BUCKET, PAYLOAD

# CONTROL (4) is the _kind of a control row (RowKind values are 0..3): changeflow.kernels.changelog
END_OF_INPUT = -1    # _seq of an end-of-input control row; _sub holds the source id
FLUSH = -2           # _seq of a flush control row
WATERMARK = 8        # the _kind of a watermark row is WATERMARK + the number of its assigner (below 120)
MAX_ASSIGNERS = 127 - WATERMARK


def source_id(name: str) -> int:
    """A stable id of a source, from its plan name (``_sub`` of its end-of-input row).

    >>> source_id("elements_3") == source_id("elements_3"), source_id("a") != source_id("b")
    (True, True)
    """
    return zlib.crc32(name.encode("utf-8"))


def merge_watermarks(*parts: tuple) -> tuple:
    """Watermarks ``(assigner number, position, watermark)`` of several controls: each once, by position.

    >>> merge_watermarks(((1, 20, 5), (2, 3, 3)), ((1, 20, 5), (1, 9, 4)))
    ((2, 3, 3), (1, 9, 4), (1, 20, 5))
    """
    return tuple(sorted({w for part in parts for w in part}, key=lambda w: (w[1], w[2], w[0])))


def is_control(kind: Column) -> Column:
    """Whether a change row (``kind`` its ``_kind`` column) is a control row: a signal or a watermark."""
    return kind >= CONTROL


@dataclass(frozen=True)
class Control:
    """What a packing stage sends every bucket: sources that ended, whether upstream flushed, watermarks.

    ``watermarks`` are ``(assigner number, position, watermark ms)`` triples (:func:`merge_watermarks`).
    An empty control is a *tick*: the operator received input in this micro-batch.
    """

    ended: frozenset = field(default_factory=frozenset)
    flush: bool = False
    watermarks: tuple = ()

    def __or__(self, other: "Control") -> "Control":
        return Control(self.ended | other.ended, self.flush or other.flush,
                       merge_watermarks(self.watermarks, other.watermarks))

    @property
    def signals(self) -> bool:
        return bool(self.ended) or self.flush or bool(self.watermarks)


def control_of(kinds: np.ndarray, seqs: np.ndarray, subs: np.ndarray) -> tuple[np.ndarray, Control]:
    """Which rows are control rows (a mask), and the signals they carry."""
    mask = kinds >= CONTROL
    if not mask.any():
        return mask, Control()
    signal = kinds == CONTROL
    ended = frozenset(int(s) for s in subs[signal & (seqs == END_OF_INPUT)])
    marks = kinds >= WATERMARK
    watermarks = merge_watermarks(tuple(zip((kinds[marks].astype(np.int64) - WATERMARK).tolist(),
                                            seqs[marks].tolist(), subs[marks].tolist(), strict=True)))
    return mask, Control(ended, bool((seqs[signal] == FLUSH).any()), watermarks)


def control_rows(columns: list[str], control: Control) -> pd.DataFrame:
    """The control rows that pass ``control`` downstream: null values, bookkeeping set.

    >>> control_rows(["k"], Control(frozenset({7}), flush=True)).to_dict("list")
    {'k': [None, None], '_kind': [4, 4], '_seq': [-1, -2], '_sub': [7, 0]}
    >>> control_rows(["k"], Control(watermarks=((3, 17, 1000),)))[["_kind", "_seq", "_sub"]].values.tolist()
    [[11, 17, 1000]]
    """
    signals = len(control.ended) + bool(control.flush)
    kinds = [CONTROL] * signals + [WATERMARK + n for n, _, _ in control.watermarks]
    seqs = [END_OF_INPUT] * len(control.ended) + ([FLUSH] if control.flush else []) + \
        [position for _, position, _ in control.watermarks]
    subs = sorted(control.ended) + ([0] if control.flush else []) + [value for _, _, value in control.watermarks]
    n = len(seqs)
    data: dict[str, Any] = {name: pd.Series([None] * n, dtype=object) for name in columns}
    data[KIND] = np.asarray(kinds, dtype=np.int8)
    data[SEQ] = np.asarray(seqs, dtype=np.int64)
    data[SUB] = np.asarray(subs, dtype=np.int64)
    return pd.DataFrame(data)


def without_control(frame: DataFrame) -> DataFrame:
    """``frame`` (changes or records) without its control rows: they never reach a sink."""
    return frame.where(~is_control(F.col(KIND)))


def end_of_input_records(sources: list[int]) -> pa.Table:
    """The end-of-input control rows of the DataStream sources numbered ``sources`` (a marker file's rows)."""
    return pa.Table.from_pandas(control_rows([VALUE], Control(frozenset(sources))), preserve_index=False,
                                schema=pa.schema([(VALUE, pa.binary()), (KIND, pa.int8()), (SEQ, pa.int64()),
                                                  (SUB, pa.int64())]))


class ControlFanOut:
    """Wraps a packer (``mapInPandas`` function): control rows out of the data, a :class:`Control` to every bucket.

    ``input_columns`` names the columns Spark sends, in order (changes or
    records: both have ``_kind``, ``_seq``, ``_sub``); ``ticks`` sends an empty control to every
    bucket whenever the partition had input (for operators that flush on idle input).
    """

    def __init__(self, packer: Any, input_columns: list[str], buckets: int, ticks: bool) -> None:
        self.packer = packer
        self.buckets = buckets
        self.ticks = ticks
        columns = list(input_columns)
        # By position: Spark may rename columns starting with "_" on the way to the worker.
        self._fields = (columns.index(KIND), columns.index(SEQ), columns.index(SUB))

    def split(self, frame: pd.DataFrame) -> tuple[np.ndarray, Control]:
        """Which rows of ``frame`` are control rows (a mask), and the signals they carry."""
        fields = [frame.iloc[:, i].to_numpy() for i in self._fields]
        return control_of(*fields)

    def __call__(self, frames: Iterator[pd.DataFrame]) -> Iterator[pd.DataFrame]:
        seen = {"rows": False, "control": Control()}

        def data() -> Iterator[pd.DataFrame]:
            for frame in frames:
                if not len(frame):
                    continue
                seen["rows"] = True
                mask, control = self.split(frame)
                if mask.any():
                    seen["control"] = seen["control"] | control
                    frame = frame.loc[~mask]
                    if not len(frame):
                        continue
                yield frame

        if getattr(self.packer, "assigner", None) is not None:   # a local window phase reads the watermarks
            yield from self.packer(data(), lambda: seen["control"].watermarks)
        else:
            yield from self.packer(data())
        control = seen["control"]
        if control.signals or (self.ticks and seen["rows"]):
            payload = pickle.dumps(control, protocol=5)
            ids = np.asarray(bucket_ids(self.buckets), dtype=np.int64)
            yield pd.DataFrame({BUCKET: ids, PAYLOAD: np.asarray([payload] * len(ids), dtype=object)})


def split_payloads(payloads: pd.Series) -> tuple[list[pd.DataFrame], Control | None]:
    """A bucket's packed payloads as its frames of data rows (as packed) and the union of its controls (or None)."""
    frames, control = [], None
    for blob in payloads:
        value = pickle.loads(blob)
        if isinstance(value, Control):
            control = value if control is None else control | value
        else:
            frames.append(value)
    return [f for f in frames if len(f)], control


class SinkWatermark:
    """The query's watermark at its sink, for a sink that acts on it (a filesystem sink's partition-time commit):
    the largest watermark seen per assigner across micro-batches, and their least (``current``).

    The translator keeps the watermark rows in the frame a sink receives when the
    sink asks (``StreamingTranslator.keep_watermarks``); each micro-batch's rows are
    split here into changes and watermarks. A watermark row carries its assigner's
    number in ``_kind`` (``WATERMARK + n``) and the watermark in ``_sub``: the sink's
    watermark is the least over the query's assigners of the largest each has emitted,
    as an operator with several inputs
    takes the least of its inputs' watermarks in Flink; before every assigner has
    emitted one there is none. Like Flink's, it starts afresh when a job restarts.

    >>> mark = SinkWatermark(1)
    >>> rows = pa.table({KIND: pa.array([0, WATERMARK], pa.int8()), SUB: pa.array([0, 5000], pa.int64())})
    >>> mark.take(rows).num_rows, mark.current
    (1, 5000)
    """

    def __init__(self, assigners: int) -> None:
        self.assigners = assigners
        self.latest: dict[int, int] = {}

    def take(self, table: pa.Table) -> pa.Table:
        """``table`` without its watermark rows, which advance the watermark."""
        marks = np.asarray(table.column(KIND).to_numpy(zero_copy_only=False)) >= WATERMARK
        if not marks.any():
            return table
        found = table.filter(pa.array(marks))
        for kind, value in zip(found.column(KIND).to_pylist(), found.column(SUB).to_pylist(), strict=True):
            number = kind - WATERMARK
            if value is not None and value > self.latest.get(number, value - 1):
                self.latest[number] = value
        return table.filter(pa.array(~marks))

    @property
    def current(self) -> int | None:
        if self.assigners == 0 or len(self.latest) < self.assigners:
            return None
        return min(self.latest.values())
