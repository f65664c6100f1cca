"""Driving DataStream event-time kernels through the KernelHarness with timestamped record frames."""

from __future__ import annotations


from changeflow.kernels.keyed.records import VALUE, dumps, loads, record_frame, timestamp_of
from changeflow.kernels.order import STAMP, source_stamp
from changeflow.testing import KernelHarness


class RecordHost:
    """A :class:`KernelHarness` fed record frames: ``process([(value, timestamp), ...])``, ``watermark(ms)``,
    ``end_of_input()``; each returns ``[(value, timestamp), ...]`` in stamp order (late records marked)."""

    def __init__(self, kernel, key=lambda v: v[0], restart_every_batch: bool = True) -> None:
        self.h = KernelHarness(kernel, [], restart_every_batch=restart_every_batch)
        self.key = key
        self.position = 0

    def process(self, timed) -> list:
        timed = list(timed)
        frame = record_frame([dumps(v, t) for v, t in timed],
                             [source_stamp(self.position + i, 0) for i in range(len(timed))],
                             [dumps(self.key(v)) for v, _ in timed])
        self.position += len(timed)
        return _decode(self.h.process_frame(frame))

    def watermark(self, ms: int) -> list:
        return _decode_rows(self.h.watermark(ms))

    def end_of_input(self) -> list:
        return _decode_rows(self.h.end_of_input())


def _decode(frame) -> list:
    if frame is None or not len(frame):
        return []
    frame = frame.sort_values(STAMP, kind="stable")
    return [_value(v) for v in frame[VALUE]]


def _decode_rows(rows) -> list:
    # The harness's rows of a record frame: positional, in the frame's column order (_value, its stamp).
    pairs = [(row[1], row[0]) for row in rows]
    return [_value(b) for _, b in sorted(pairs, key=lambda p: p[0])]


def _value(blob: bytes):
    if blob[:1] == b"L":
        return ("LATE", loads(blob[1:]), timestamp_of(blob[1:]))
    return (loads(blob), timestamp_of(blob))
