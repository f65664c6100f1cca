"""How order travels with changes and records: the one module that knows a DataStream order stamp's layout.

Spark's shuffles do not keep row order, so every row carries a stamp from
which an operator restores the order a single-threaded Flink job sees, and
every operator stamps its output from its input's. Both APIs follow the same
rule (sort by the stamp, stably: equal stamps keep arrival order); they spell
the stamp differently:

- a Table change carries ``_seq`` (the position of the source row it
  descends from) and ``_sub`` (its position among that row's descendants),
  two int64 columns; a stateful operator stamps its ``i``-th output of an
  input ``(_seq, _sub * FANOUT + i)`` (:mod:`changeflow.kernels.changelog`);
- a DataStream record carries ``_ord``, a byte string compared
  lexicographically, because a ``flat_map`` may emit any number of records per
  input and any number of fan-outs may follow each other. Its layouts, all
  built here:

  ================================  ====================================================================
  a source's record                 position (8 bytes, big-endian) + source number (2 bytes)
  a fan-out's ``i``-th output       the input's stamp + ``i`` (4 bytes): :func:`child_stamp`
  timers due at a time (streaming)  ``ff``x8 [+ ``01`` event time] + time - MIN (8): :func:`timer_stamp`,
                                    after every source position; a firing's outputs are its grandchildren
  a window firing at a watermark    ``ff``x8 ``02`` + time - MIN (8) + the window's last record's stamp:
                                    :func:`fire_stamp`
  a key's timers at end of input    the key's last record's stamp + ``ff``x4 + ``00`` (event time) or
  (batch execution)                 ``01`` (processing time): :func:`key_end_stamp`; as above
  a control record                  ``_seq`` and ``_sub`` (8 bytes each, signed) [+ a watermark's
                                    ``_kind``]: :func:`control_stamp`
  ================================  ====================================================================

Sorting by stamp is then exactly "by source record, then by output index at
each fan-out" at any depth (:func:`sort_records`).

Between the two (a Table converted to a DataStream and back,
:mod:`changeflow.kernels.bridge`) a change ``(_seq, _sub)`` becomes
:func:`change_stamp` and a stamp becomes ``(stamp_seq, stamp_sub)``.
:func:`stamp_sub` packs the source number (8 bits) and the first two fan-out
indices (16 bits each) into ``_sub``, leaving the Table kernels' ``_sub``
arithmetic room for eleven stateful levels; records that differ only beyond
that (a third nested fan-out, an index above 65534, a source numbered above
255) tie and keep arrival order.
"""

from __future__ import annotations

import pandas as pd

ORD = "_ord"

_MIN_LONG = -2**63
_AFTER_SOURCES = b"\xff" * 8   # no source position reaches it: timer and firing outputs come after the records
_EVENT_TIMER = b"\x01"
_FIRING = b"\x02"
_KEY_END = b"\xff" * 4         # above any fan-out index a key's last record's outputs reach (below 2**32 - 1)
_SIGNAL_KIND = 4   # changeflow.runtime.spark.control_rows.CONTROL: a signal's stamp has no kind byte
_ESCAPE = 0xFFFFFFFF


def source_stamp(position: int, source: int) -> bytes:
    """The stamp of a source's ``position``-th record.

    >>> source_stamp(1, 0) < source_stamp(1, 1) < source_stamp(2, 0)
    True
    """
    return position.to_bytes(8, "big") + source.to_bytes(2, "big")


def child_stamp(parent: bytes, index: int) -> bytes:
    """The stamp of the ``index``-th output a fan-out operator emits for the record stamped ``parent``.

    >>> a = source_stamp(0, 0)
    >>> child_stamp(a, 1) < child_stamp(a, 2) < source_stamp(1, 0)
    True
    """
    return parent + index.to_bytes(4, "big")


def timer_stamp(time: int, event: bool) -> bytes:
    """The stamp of the timers due at ``time`` in a streaming call; its ``n``-th firing's outputs are the
    children of ``child_stamp(timer_stamp(...), n)``.

    After every record of the micro-batch; event-time timers' before the processing-time ones' (for
    any time from -2**62 on).

    >>> source_stamp(2**40, 3) < timer_stamp(5, event=True) < timer_stamp(-1, event=False)
    True
    >>> child_stamp(timer_stamp(5, False), 1) < child_stamp(timer_stamp(6, False), 0)
    True
    """
    mark = _EVENT_TIMER if event else b""
    return _AFTER_SOURCES + mark + (time - _MIN_LONG).to_bytes(8, "big")


def fire_stamp(time: int, last: bytes) -> bytes:
    """The stamp of a window firing when event time reached ``time``; ``last`` is the window's last record's stamp.

    After every record of the micro-batch; firings in time order, then in their windows' last records' order.

    >>> source_stamp(2**40, 3) < fire_stamp(7, source_stamp(9, 0)) < fire_stamp(7, source_stamp(10, 0))
    True
    """
    return _AFTER_SOURCES + _FIRING + (time - _MIN_LONG).to_bytes(8, "big") + last


def key_end_stamp(last: bytes, event: bool) -> bytes:
    """Batch execution: the stamp of a key's timers fired at the end of its input (``last``: its last record's);
    a firing's outputs are children of its children, as :func:`timer_stamp`'s.

    After every output of that record; the event-time timers' before the processing-time ones'.

    >>> a = source_stamp(4, 0)
    >>> child_stamp(a, 7) < key_end_stamp(a, event=True) < key_end_stamp(a, event=False) < source_stamp(5, 0)
    True
    """
    return last + _KEY_END + (b"\x00" if event else b"\x01")


def sort_records(frame: pd.DataFrame) -> pd.DataFrame:
    """A record frame in stamp order (stable: equal stamps keep arrival order), with a fresh index."""
    return frame.sort_values(ORD, kind="stable", ignore_index=True)


# --- control records ---------------------------------------------------------------------------
def control_stamp(seq: int, sub: int, kind: int = _SIGNAL_KIND) -> bytes:
    """The ``_ord`` of a control record carrying a control row's ``_seq``, ``_sub`` (and a watermark's ``_kind``).

    >>> control_stamp(-1, 7)[:8] == (-1).to_bytes(8, "big", signed=True), parse_control_stamp(control_stamp(-1, 7))
    (True, (-1, 7))
    >>> control_kind(control_stamp(5, 1000, 9)), control_kind(control_stamp(-1, 7))
    (9, 4)
    """
    stamp = seq.to_bytes(8, "big", signed=True) + sub.to_bytes(8, "big", signed=True)
    return stamp if kind == _SIGNAL_KIND else stamp + bytes([kind])


def parse_control_stamp(stamp: bytes) -> tuple[int, int]:
    """The ``(_seq, _sub)`` a control record's ``_ord`` carries."""
    if len(stamp) not in (16, 17):
        raise ValueError(f"not a control record stamp (16 or 17 bytes): {stamp!r}")
    return int.from_bytes(stamp[:8], "big", signed=True), int.from_bytes(stamp[8:16], "big", signed=True)


def control_kind(stamp: bytes) -> int:
    """The ``_kind`` of the control row a control record's ``_ord`` carries."""
    return stamp[16] if len(stamp) == 17 else _SIGNAL_KIND


# --- between the encodings: a change's (_seq, _sub) <-> a record's stamp -------------------------
def change_stamp(seq: int, sub: int, source: int) -> bytes:
    """The record stamp of change ``(seq, sub)`` of a Table plan read as DataStream source ``source``.

    >>> change_stamp(1, 0, 0) < change_stamp(1, 1, 0) < change_stamp(1, 2**40, 0) < change_stamp(2, 0, 0)
    True
    """
    head = seq.to_bytes(8, "big", signed=True) + source.to_bytes(2, "big")
    if 0 <= sub < _ESCAPE:
        return head + sub.to_bytes(4, "big")
    return head + _ESCAPE.to_bytes(4, "big") + sub.to_bytes(8, "big", signed=True)


def stamp_sub(stamp: bytes) -> int:
    """The ``_sub`` of a record stamped ``stamp``: its source number and first two fan-out indices, packed.

    >>> a = source_stamp(5, 1)
    >>> stamp_sub(a) < stamp_sub(child_stamp(a, 0)) < stamp_sub(child_stamp(child_stamp(a, 0), 1))
    True
    >>> stamp_sub(child_stamp(a, 2)) < stamp_sub(source_stamp(5, 2))
    True
    """
    source = min(int.from_bytes(stamp[8:10], "big"), 0xFF)
    packed = source
    for i in range(2):
        start = 10 + 4 * i
        index = int.from_bytes(stamp[start:start + 4], "big") + 1 if len(stamp) >= start + 4 else 0
        packed = (packed << 16) | min(index, 0xFFFF)
    return packed


def stamp_seq(stamp: bytes) -> int:
    """The source position a record stamp starts with."""
    return int.from_bytes(stamp[:8], "big", signed=True)
