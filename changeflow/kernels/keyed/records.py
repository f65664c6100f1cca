"""How DataStream records travel: pickled values with a binary order stamp.

A record frame is a pandas frame with the columns

``_value``  the record, pickled (``bytes``)
``_kind``   0 (``+I``) for a record, ``>= 4`` for a control row (``changeflow.runtime.spark.control_rows``)
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
fan-outs, timers, window firings) is built in
:mod:`changeflow.kernels.order`.

Keys are compared by their pickled bytes, as PyFlink compares keys without key
type information (``PICKLED_BYTE_ARRAY``): ``1`` and ``1.0`` are two keys.
"""

from __future__ import annotations

import pickle
from typing import Any

import numpy as np
import pandas as pd

from changeflow.kernels.changelog import CONTROL, INSERT, KIND
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


def record_frame(values: Any, stamps: list[Stamp] | dict[str, np.ndarray], keys: Any = None,
                 kinds: Any = None) -> pd.DataFrame:
    """A record frame: ``_key`` (when ``keys`` is given), ``_value``, ``_kind`` and the stamp columns.

    ``stamps`` are the rows' stamps, or stamp columns as :func:`~changeflow.kernels.order.stamp_arrays`
    gives them; ``kinds`` the rows' ``_kind`` (default: every row a record, ``+I``).

    >>> record_frame([b"x"], [(4, 0)]).to_dict("list")
    {'_value': [b'x'], '_kind': [0], '_seq': [4], '_sub': [0]}
    """
    data: dict[str, Any] = {} if keys is None else {KEY: np.asarray(keys, dtype=object)}
    data[VALUE] = np.asarray(values, dtype=object)
    n = len(data[VALUE])
    data[KIND] = np.full(n, INSERT, dtype=np.int8) if kinds is None else np.asarray(kinds, dtype=np.int8)
    data.update(stamps if isinstance(stamps, dict) else stamp_columns(stamps))
    return pd.DataFrame(data)


#: A record frame's columns (a keyed one's: ``[KEY] + RECORD_COLUMNS``), a change frame's bookkeeping after
#: the one payload column.
RECORD_COLUMNS = [VALUE, KIND] + STAMP


class UserFunctionError(RuntimeError):
    """A user function raised: names the function and the record it failed on."""


def fail(function: str, record: Any, error: BaseException, key: Any = None) -> UserFunctionError:
    where = f" (key {key!r})" if key is not None else ""
    return UserFunctionError(f"user function {function} failed on record {record!r}{where}: "
                             f"{type(error).__name__}: {error}")


# --- control rows ------------------------------------------------------------------------------
# With a flush policy or event time, end-of-input and flush signals and watermarks travel in band
# among the records as control rows, exactly as among a Table job's changes
# (changeflow.runtime.spark.control_rows): ``_kind >= 4``, ``_value`` null.


def control_mask(frame: pd.DataFrame) -> np.ndarray:
    """Which rows of a record frame are control rows (a numpy bool array)."""
    return frame[KIND].to_numpy() >= CONTROL
