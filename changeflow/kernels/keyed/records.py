"""How DataStream records travel: pickled values with a binary order stamp.

A record frame is a pandas frame with the columns

``_value``  the record, pickled (``bytes``)
``_ord``    its order stamp (``bytes``)
``_key``    the pickled key, only between ``key_by`` and the keyed operator

A record with an event timestamp (Flink's ``StreamRecord`` timestamp, set by
``assign_timestamps_and_watermarks`` and kept by the operators after it) has
its ``_value`` prefixed: ``b"T"``, the timestamp (8 bytes, big-endian, signed),
then the pickle. A pickle (protocol 4) starts with ``b"\\x80"``, so the two never
meet; :func:`loads` reads both and :func:`timestamp_of` the timestamp (None
for a record without one, as Flink's ``Long.MIN_VALUE`` "no timestamp").

The stamp restores Flink's single-threaded order after Spark's shuffles, as
``_seq``/``_sub`` do for changelogs (:mod:`changeflow.kernels.changelog`), but
a ``flat_map`` may emit any number of records per input, so the stamp is a
byte string compared lexicographically: 8 bytes of the source position, 2 of
the source's number (union inputs tie-break by source), and 4 more per
fan-out operator (``flat_map``, ``process``) with the output's index. Sorting
by stamp is then exactly "by source record, then by output index at each
fan-out" at any depth.

Keys are compared by their pickled bytes, as PyFlink compares keys without key
type information (``PICKLED_BYTE_ARRAY``): ``1`` and ``1.0`` are two keys.
"""

from __future__ import annotations

import pickle
from typing import Any

VALUE = "_value"
ORD = "_ord"
KEY = "_key"
_PROTOCOL = 4


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


_TIMESTAMPED = b"T"


def dumps(value: Any, timestamp: int | None = None) -> bytes:
    """A record's ``_value``: the pickled value, with its event ``timestamp`` (ms) when it has one.

    >>> loads(dumps("a", 5)), timestamp_of(dumps("a", 5)), timestamp_of(dumps("a"))
    ('a', 5, None)
    """
    blob = pickle.dumps(value, protocol=_PROTOCOL)
    if timestamp is None:
        return blob
    return _TIMESTAMPED + int(timestamp).to_bytes(8, "big", signed=True) + blob


def loads(blob: bytes) -> Any:
    """The value of a record's ``_value`` (with or without a timestamp)."""
    if blob[:1] == _TIMESTAMPED:
        return pickle.loads(blob[9:])
    return pickle.loads(blob)


def timestamp_of(blob: bytes) -> int | None:
    """The event timestamp of a record's ``_value`` (ms), or None when it has none."""
    if blob[:1] == _TIMESTAMPED:
        return int.from_bytes(blob[1:9], "big", signed=True)
    return None


class UserFunctionError(RuntimeError):
    """A user function raised: names the function and the record it failed on."""


def fail(function: str, record: Any, error: BaseException, key: Any = None) -> UserFunctionError:
    where = f" (key {key!r})" if key is not None else ""
    return UserFunctionError(f"user function {function} failed on record {record!r}{where}: "
                             f"{type(error).__name__}: {error}")


# --- control records -------------------------------------------------------------------------
# With a flush policy, end-of-input and flush signals (changeflow.runtime.spark.control_rows)
# travel in band as control records: an empty ``_value`` (no pickled record is empty) and an
# ``_ord`` holding the signal's ``_seq`` and ``_sub`` (16 bytes, big-endian, signed), then, for a
# watermark, its ``_kind`` (one more byte).
CONTROL_VALUE = b""
_SIGNAL_KIND = 4   # changeflow.runtime.spark.control_rows.CONTROL: a signal's stamp has no kind byte


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


def control_mask(values: Any) -> Any:
    """Which of a frame's ``_value`` blobs are control records (a numpy bool array)."""
    import numpy as np

    return np.fromiter((len(v) == 0 for v in values), dtype=bool, count=len(values))
