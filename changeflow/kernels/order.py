"""How order travels with changes and records: the one module that knows a DataStream order stamp's layout.

Spark's shuffles do not keep row order, so every row carries a stamp from
which an operator restores the order a single-threaded Flink job sees, and
every operator stamps its output from its input's. Both APIs follow the same
rule (sort by the stamp, stably: equal stamps keep arrival order) and the same
pair of int64s:

- a Table change carries ``_seq`` (the position of the source row it
  descends from) and ``_sub`` (its position among that row's descendants);
  a stateful operator stamps its ``i``-th output of an input
  ``(_seq, _sub * FANOUT + i)`` (:mod:`changeflow.kernels.changelog`);
- a DataStream record carries the same two numbers, in the same two int64
  columns ``_seq`` and ``_sub`` (:data:`STAMP`); inside a kernel a stamp is the
  tuple ``(_seq, _sub)``, which compares as the pair does. Its layouts, all built here:

  ===================================  ====================================================================
  a source's record                    ``(position, source << 32)``: :func:`source_stamp`
  a fan-out's ``i``-th output          the input's ``_sub`` with its first free 16-bit slot (bits 16-31,
                                       then 0-15) set to ``i + 1``: :func:`child_stamp`
  timers due at a time (streaming)     ``(2**62 + domain * 2**60 + time + 2**59, 0)``, after every source
                                       position (domain 0 event time, 2 processing time): :func:`timer_stamp`;
                                       a firing's outputs are its grandchildren
  a window firing at a watermark       as a timer's, domain 1: :func:`fire_stamp`
  a key's timers at end of input       the key's last record's stamp with its first free slot 0xFFFE
  (batch execution)                    (event time) or 0xFFFF (processing time): :func:`key_end_stamp`
  a Table change read as records       ``(_seq, source << 32 | min(_sub + 1, 0xFFFD) << 16)``: :func:`change_stamp`
  a control row (signal, watermark)    its own ``_seq`` and ``_sub`` (``changeflow.runtime.spark.control_rows``)
  ===================================  ====================================================================

A record's ``(_seq, _sub)`` is then a change's: the bridge between the APIs
(:mod:`changeflow.kernels.bridge`) copies the two columns. Kernels read a frame's
stamps with :func:`stamps_of` and write them with :func:`stamp_columns`. ``_sub``
stays below 2**40, leaving the Table kernels' ``_sub`` arithmetic room for
eleven stateful levels.

What two int64s cannot hold, and what was measured against the DataStream
goldens (docs/architecture.md, "Order in two int64s"): records that differ only
beyond two nested fan-outs, at an index above 65532 or in a source numbered above
255 tie; timers and firings at times beyond +-2**59 ms tie with the extreme ones
(the end-of-input timer at Long.MAX_VALUE among them); window firings of one time
tie (the old byte stamp ordered them by their windows' last records), and so do a
batch key's timer outputs past its last record's second fan-out. Ties keep arrival
order, which is Flink's order within one bucket, and no golden compares an order
that a tie changes.
"""

from __future__ import annotations

from typing import Iterable

import numpy as np
import pandas as pd

from changeflow.kernels.changelog import SEQ, SUB

#: A record frame's stamp columns, the Table path's pair.
STAMP = [SEQ, SUB]
Stamp = tuple[int, int]

_SOURCE_SHIFT = 32
_SLOTS = (16, 0)                 # the fan-out slots of a record's _sub, outermost first
_SLOT = 0xFFFF
_MAX_INDEX = 0xFFFD              # a fan-out index + 1 saturates here: 0xFFFE and 0xFFFF mark a key's end
_KEY_END_EVENT, _KEY_END_PROCESSING = 0xFFFE, 0xFFFF
_AFTER_SOURCES = 2**62           # no source position reaches it: timer and firing outputs come after the records
_DOMAIN = 2**60
_EVENT_TIMER, _FIRING, _PROCESSING_TIMER = 0, 1, 2
_TIME_OFFSET = 2**59


def stamp_seq(stamp: Stamp) -> int:
    """A record stamp's ``_seq``: its source position (or a timer's or firing's place after them)."""
    return stamp[0]


def stamp_sub(stamp: Stamp) -> int:
    """A record stamp's ``_sub``: its source number and first two fan-out indices, packed.

    >>> a = source_stamp(5, 1)
    >>> stamp_sub(a) < stamp_sub(child_stamp(a, 0)) < stamp_sub(child_stamp(child_stamp(a, 0), 1))
    True
    >>> stamp_sub(child_stamp(a, 2)) < stamp_sub(source_stamp(5, 2))
    True
    """
    return stamp[1]


def stamps_of(frame: pd.DataFrame, columns: Iterable[str] = STAMP) -> list[Stamp]:
    """A record frame's stamps, ``(_seq, _sub)`` tuples in row order (``columns`` names the pair).

    >>> stamps_of(pd.DataFrame({SEQ: [3, 1], SUB: [0, 2]}))
    [(3, 0), (1, 2)]
    """
    seq, sub = columns
    return list(zip(frame[seq].tolist(), frame[sub].tolist(), strict=True))


def stamp_arrays(frame: pd.DataFrame) -> dict[str, np.ndarray]:
    """A record frame's stamp columns as they are, to give the same stamps to another frame of its rows."""
    return {c: frame[c].to_numpy(dtype=np.int64) for c in STAMP}


def stamp_columns(stamps: list[Stamp], columns: Iterable[str] = STAMP) -> dict[str, np.ndarray]:
    """The stamp columns (int64) of a record frame whose rows are stamped ``stamps``.

    >>> {k: v.tolist() for k, v in stamp_columns([(3, 0), (1, 2)]).items()}
    {'_seq': [3, 1], '_sub': [0, 2]}
    """
    seq, sub = columns
    n = len(stamps)
    return {seq: np.fromiter((s[0] for s in stamps), dtype=np.int64, count=n),
            sub: np.fromiter((s[1] for s in stamps), dtype=np.int64, count=n)}


def source_stamp(position: int, source: int) -> Stamp:
    """The stamp of a source's ``position``-th record (sources numbered above 255 tie).

    >>> source_stamp(1, 0) < source_stamp(1, 1) < source_stamp(2, 0)
    True
    """
    return (position, min(source, 0xFF) << _SOURCE_SHIFT)


def _with_slot(sub: int, value: int) -> int:
    """``sub`` with its first free fan-out slot set to ``value`` (unchanged, a tie, when none is free)."""
    for shift in _SLOTS:
        if not (sub >> shift) & _SLOT:
            return sub | (value << shift)
    return sub


def child_stamp(parent: Stamp, index: int) -> Stamp:
    """The stamp of the ``index``-th output a fan-out operator emits for the record stamped ``parent``.

    >>> a = source_stamp(0, 0)
    >>> a < child_stamp(a, 1) < child_stamp(a, 2) < child_stamp(child_stamp(a, 2), 0) < source_stamp(1, 0)
    True
    """
    return (parent[0], _with_slot(parent[1], min(index + 1, _MAX_INDEX)))


def _after_sources(domain: int, time: int) -> Stamp:
    return (_AFTER_SOURCES + domain * _DOMAIN + min(max(time + _TIME_OFFSET, 0), _DOMAIN - 1), 0)


def timer_stamp(time: int, event: bool) -> Stamp:
    """The stamp of the timers due at ``time`` in a streaming call; its ``n``-th firing's outputs are the
    children of ``child_stamp(timer_stamp(...), n)``.

    After every record of the micro-batch; event-time timers' before the processing-time ones'.

    >>> source_stamp(2**40, 3) < timer_stamp(5, event=True) < timer_stamp(-1, event=False)
    True
    >>> child_stamp(timer_stamp(5, False), 1) < child_stamp(timer_stamp(6, False), 0)
    True
    """
    return _after_sources(_EVENT_TIMER if event else _PROCESSING_TIMER, time)


def fire_stamp(time: int) -> Stamp:
    """The stamp of the window firings when event time reached ``time``: after every record of the
    micro-batch, between the event-time and the processing-time timers; firings of one time tie.

    >>> source_stamp(2**40, 3) < timer_stamp(7, True) < fire_stamp(7) < fire_stamp(8) < timer_stamp(0, False)
    True
    """
    return _after_sources(_FIRING, time)


def key_end_stamp(last: Stamp, event: bool) -> Stamp:
    """Batch execution: the stamp of a key's timers fired at the end of its input (``last``: its last record's);
    a firing's outputs are children of its children, as :func:`timer_stamp`'s.

    After every output of that record; the event-time timers' before the processing-time ones'.

    >>> a = source_stamp(4, 0)
    >>> child_stamp(a, 7) < key_end_stamp(a, event=True) < key_end_stamp(a, event=False) < source_stamp(5, 0)
    True
    """
    mark = _KEY_END_EVENT if event else _KEY_END_PROCESSING
    return (last[0], _with_slot(last[1], mark))


def sort_records(frame: pd.DataFrame) -> pd.DataFrame:
    """A record frame in stamp order (stable: equal stamps keep arrival order), with a fresh index."""
    return frame.sort_values(STAMP, kind="stable", ignore_index=True)


# --- between the encodings: a change's (_seq, _sub) <-> a record's stamp -------------------------
def change_stamp(seq: int, sub: int, source: int) -> Stamp:
    """The record stamp of change ``(seq, sub)`` of a Table plan read as DataStream source ``source``: the
    ``sub``-th output of that source's record ``seq`` (``sub`` from 0xFFFC on ties).

    >>> change_stamp(1, 0, 0) < change_stamp(1, 1, 0) < change_stamp(1, 2**40, 0) < change_stamp(2, 0, 0)
    True
    """
    return child_stamp(source_stamp(seq, source), max(sub, 0))
