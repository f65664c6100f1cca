"""How DataStream records travel: pickled values with a binary order stamp.

A record frame is a pandas frame with the columns

``_value``  the record, pickled (``bytes``)
``_seq``    its order stamp, two int64s (:mod:`changeflow.kernels.order`)
``_sub``
``_key``    the pickled key, only between ``key_by`` and the keyed operator

A record with an event timestamp (Flink's ``StreamRecord`` timestamp, set by
``assign_timestamps_and_watermarks`` and kept by the operators after it) has
its ``_value`` prefixed: ``b"T"``, the timestamp (8 bytes, big-endian, signed),
then the pickle. A pickle (protocol 4) starts with ``b"\\x80"``, so the two never
meet; :func:`loads` reads both and :func:`timestamp_of` the timestamp (None
for a record without one, as Flink's ``Long.MIN_VALUE`` "no timestamp").

The stamp restores Flink's single-threaded order after Spark's shuffles, as
``_seq``/``_sub`` do for changelogs (they are the same columns); every layout of it (source records,
fan-outs, timers, window firings, control records) is built in
:mod:`changeflow.kernels.order`.

Keys are compared by their pickled bytes, as PyFlink compares keys without key
type information (``PICKLED_BYTE_ARRAY``): ``1`` and ``1.0`` are two keys.
"""

from __future__ import annotations

import pickle
from typing import Any

import numpy as np
import pandas as pd

from changeflow.kernels.order import STAMP, Stamp, stamp_columns

VALUE = "_value"
KEY = "_key"
_PROTOCOL = 4
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


def record_frame(values: Any, stamps: list[Stamp] | dict[str, np.ndarray], keys: Any = None) -> pd.DataFrame:
    """A record frame: ``_key`` (when ``keys`` is given), ``_value`` and the stamp columns.

    ``stamps`` are the rows' stamps, or stamp columns as :func:`~changeflow.kernels.order.stamp_arrays` gives them.

    >>> record_frame([b"x"], [(4, 0)]).to_dict("list")
    {'_value': [b'x'], '_seq': [4], '_sub': [0]}
    """
    data: dict[str, Any] = {} if keys is None else {KEY: np.asarray(keys, dtype=object)}
    data[VALUE] = np.asarray(values, dtype=object)
    data.update(stamps if isinstance(stamps, dict) else stamp_columns(stamps))
    return pd.DataFrame(data)


#: A record frame's columns (a keyed one's: ``[KEY] + RECORD_COLUMNS``).
RECORD_COLUMNS = [VALUE] + STAMP


class UserFunctionError(RuntimeError):
    """A user function raised: names the function and the record it failed on."""


def fail(function: str, record: Any, error: BaseException, key: Any = None) -> UserFunctionError:
    where = f" (key {key!r})" if key is not None else ""
    return UserFunctionError(f"user function {function} failed on record {record!r}{where}: "
                             f"{type(error).__name__}: {error}")


# --- control records -------------------------------------------------------------------------
# With a flush policy or event time, end-of-input and flush signals and watermarks
# (changeflow.runtime.spark.control_rows) travel in band as control records: the control row's
# ``_seq`` and ``_sub`` as the stamp, and a ``_value`` no pickled record has: empty for a signal,
# one byte (the watermark row's ``_kind``) for a watermark.
CONTROL_VALUE = b""
_SIGNAL_KIND = 4   # changeflow.runtime.spark.control_rows.CONTROL


def control_value(kind: int) -> bytes:
    """The ``_value`` of a control record carrying a control row of ``_kind`` ``kind``.

    >>> control_value(4), control_value(9), control_kind(control_value(9)), control_kind(b"")
    (b'', b'\\t', 9, 4)
    """
    return CONTROL_VALUE if kind == _SIGNAL_KIND else bytes([kind])


def control_kind(value: bytes) -> int:
    """The ``_kind`` of the control row a control record's ``_value`` carries."""
    return value[0] if len(value) else _SIGNAL_KIND


def control_mask(values: Any) -> Any:
    """Which of a frame's ``_value`` blobs are control records (a numpy bool array)."""
    return np.fromiter((len(v) <= 1 for v in values), dtype=bool, count=len(values))
