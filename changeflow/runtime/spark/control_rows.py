"""Control rows: end of input and flush signals that reach every bucket of every stateful operator.

Structured Streaming has no end-of-input event: an ``availableNow`` query just
stops after its last data batch, and a stateful operator only runs for hash
buckets that received rows. Operators that must act when input ends (the flush
buffer of FLIP-365 flushes, FLIP-331's end-of-input operators emit their
result) therefore get the signal in band, as *control rows* of the changelog:

``_kind = 4`` (:data:`CONTROL`), every column null, and
``_seq = -1`` (:data:`END_OF_INPUT`)  with ``_sub`` the id of the source that ended
                                     (:func:`source_id` of its plan name), or
``_seq = -2`` (:data:`FLUSH`)         an upstream buffering operator flushed.

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
   again. A kernel with an ``end_of_input(state)`` method (issue 6's end-of-input
   operators) has it called once per bucket, after all sources upstream of the
   operator have ended; what it returns is emitted like any other output.
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

from changeflow.kernels.changelog import KIND, SEQ, SUB
from changeflow.runtime.spark.buckets import bucket_ids
from changeflow.runtime.spark.packing import BUCKET, PAYLOAD

CONTROL = 4          # the _kind of a control row (RowKind values are 0..3)
END_OF_INPUT = -1    # _seq of an end-of-input control row; _sub holds the source id
FLUSH = -2           # _seq of a flush control row


def source_id(name: str) -> int:
    """A stable id of a source, from its plan name (``_sub`` of its end-of-input row).

    >>> source_id("elements_3") == source_id("elements_3"), source_id("a") != source_id("b")
    (True, True)
    """
    return zlib.crc32(name.encode("utf-8"))


@dataclass(frozen=True)
class Control:
    """What a packing stage sends every bucket: sources that ended, whether upstream flushed.

    An empty control is a *tick*: the operator received input in this micro-batch.
    """

    ended: frozenset = field(default_factory=frozenset)
    flush: bool = False

    def __or__(self, other: "Control") -> "Control":
        return Control(self.ended | other.ended, self.flush or other.flush)

    @property
    def signals(self) -> bool:
        return bool(self.ended) or self.flush


def control_of(kinds: np.ndarray, seqs: np.ndarray, subs: np.ndarray) -> tuple[np.ndarray, Control]:
    """Which rows are control rows (a mask), and the signals they carry."""
    mask = kinds == CONTROL
    if not mask.any():
        return mask, Control()
    ended = frozenset(int(s) for s in subs[mask & (seqs == END_OF_INPUT)])
    return mask, Control(ended, bool((seqs[mask] == FLUSH).any()))


def control_rows(columns: list[str], control: Control) -> pd.DataFrame:
    """The control rows that pass ``control`` downstream: null values, bookkeeping set.

    >>> control_rows(["k"], Control(frozenset({7}), flush=True)).to_dict("list")
    {'k': [None, None], '_kind': [4, 4], '_seq': [-1, -2], '_sub': [7, 0]}
    """
    seqs = [END_OF_INPUT] * len(control.ended) + ([FLUSH] if control.flush else [])
    subs = sorted(control.ended) + ([0] if control.flush else [])
    n = len(seqs)
    data: dict[str, Any] = {name: pd.Series([None] * n, dtype=object) for name in columns}
    data[KIND] = np.full(n, CONTROL, dtype=np.int8)
    data[SEQ] = np.asarray(seqs, dtype=np.int64)
    data[SUB] = np.asarray(subs, dtype=np.int64)
    return pd.DataFrame(data)


class ControlFanOut:
    """Wraps a packer (``mapInPandas`` function): control rows out of the data, a :class:`Control` to every bucket.

    ``input_columns`` names the columns Spark sends, in order; ``ticks`` sends
    an empty control to every bucket whenever the partition had input (for
    operators that flush on idle input).
    """

    def __init__(self, packer: Any, input_columns: list[str], buckets: int, ticks: bool) -> None:
        self.packer = packer
        self.buckets = buckets
        self.ticks = ticks
        self._kind = input_columns.index(KIND)
        self._seq = input_columns.index(SEQ)
        self._sub = input_columns.index(SUB)

    def split(self, frame: pd.DataFrame) -> tuple[np.ndarray, Control]:
        """Which rows of ``frame`` are control rows (a mask), and the signals they carry.

        Other row formats (the DataStream runtime's records) override this.
        """
        return control_of(frame.iloc[:, self._kind].to_numpy(), frame.iloc[:, self._seq].to_numpy(),
                          frame.iloc[:, self._sub].to_numpy())

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
                    frame = frame[~mask]
                    if not len(frame):
                        continue
                yield frame

        yield from self.packer(data())
        control = seen["control"]
        if control.signals or (self.ticks and seen["rows"]):
            payload = pickle.dumps(control, protocol=5)
            ids = np.asarray(bucket_ids(self.buckets), dtype=np.int64)
            yield pd.DataFrame({BUCKET: ids, PAYLOAD: np.asarray([payload] * len(ids), dtype=object)})


def split_payloads(payloads: pd.Series) -> tuple[pd.DataFrame | None, Control | None]:
    """A bucket's packed payloads as its data rows (or None) and the union of its controls (or None)."""
    frames, control = [], None
    for blob in payloads:
        value = pickle.loads(blob)
        if isinstance(value, Control):
            control = value if control is None else control | value
        else:
            frames.append(value)
    if not frames:
        return None, control
    return (pd.concat(frames, ignore_index=True) if len(frames) > 1 else frames[0]), control
