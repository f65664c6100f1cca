"""How DataStream records travel: pickled values with a binary order stamp.

A record frame is a pandas frame with the columns

``_value``  the record, pickled (``bytes``)
``_kind``   the record's :class:`~changeflow.common.RowKind` value (0-3), ``>= 4`` for a control row
            (``changeflow.runtime.spark.control_rows``)
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

Row kinds. ``_kind`` is the one carrier of a record's kind, as it is of a Table
change's: a kernel that turns a user's value into a record writes the value's
RowKind there (:func:`encode`, :func:`records_of`: a :class:`~changeflow.common.Row`'s
``get_row_kind()``, ``+I`` for any other value), and a kernel that hands a
record's value to user code sets it back on the Row (:func:`decode`,
:func:`values_of`). So the Table <-> DataStream bridge moves a change's ``_kind``
as it is and only (un)pickles the payload, and any code that reads the frame (a
buffer, a sink, a filter in Spark) sees a record's kind without unpickling it.
A value kept in state is pickled whole, its Row's kind included, as Flink's
state serializer keeps a Row's kind.

A keyed operator's side-output record (a ``KeyedProcessFunction`` or
``KeyedCoProcessFunction`` yielding ``(output_tag, value)``) travels in the
operator's one output with its ``_value`` prefixed by :func:`side_mark`:
``b"S"``, the tag id's length (4 bytes) and the tag id, then the record as
usual; the main output and each side output are filters of that output.

Keys are compared by their pickled bytes, as PyFlink compares keys without key
type information (``PICKLED_BYTE_ARRAY``): ``1`` and ``1.0`` are two keys.
"""

from __future__ import annotations

import pickle
from typing import Any

import numpy as np
import pandas as pd

from changeflow.common.row import Row
from changeflow.common.row_kind import RowKind
from changeflow.kernels.changelog import CONTROL, INSERT, KIND
from changeflow.kernels.order import STAMP, Stamp, stamp_columns

VALUE = "_value"
KEY = "_key"
_PROTOCOL = 4
_TIMESTAMPED = b"T"
_KINDS = list(RowKind)  # by value: _KINDS[k] is the RowKind whose value is k


#: The first byte of a keyed operator's side-output record (:func:`side_mark`).
SIDE = b"S"


def side_mark(tag_id: str) -> bytes:
    """The ``_value`` prefix of a keyed operator's record bound for the side output ``tag_id``.

    >>> side_mark("late")
    b'S\\x00\\x00\\x00\\x04late'
    """
    tag = tag_id.encode("utf-8")
    return SIDE + len(tag).to_bytes(4, "big") + tag


def output_tag_of(item: Any) -> str | None:
    """The tag id of a function's output yielded as ``(output_tag, value)`` (a side output's value), else None.

    An output tag is recognised by the ``is_output_tag`` marker of its class (the API's ``OutputTag``).
    """
    if isinstance(item, tuple) and len(item) == 2 and getattr(type(item[0]), "is_output_tag", False):
        return item[0].tag_id
    return None


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


def kind_of(value: Any) -> int:
    """A value's ``_kind``: a Row's RowKind value, ``+I`` (0) for any other value.

    >>> kind_of(Row.of(RowKind.UPDATE_AFTER, ["a"])), kind_of(("a", 1))
    (2, 0)
    """
    return value.get_row_kind().value if isinstance(value, Row) else INSERT


def decode(blob: bytes, kind: int) -> Any:
    """The value of a record's ``_value`` as user code sees it: a Row's kind is the record's ``_kind``.

    >>> str(decode(dumps(Row("a")), 3).get_row_kind())
    '-D'
    """
    value = loads(blob)
    if isinstance(value, Row):
        value.set_row_kind(_KINDS[kind])
    return value


def values_of(frame: pd.DataFrame) -> list[Any]:
    """The values of a record frame's records, each Row's kind its ``_kind`` (:func:`decode`)."""
    return [decode(b, k) for b, k in zip(frame[VALUE], frame[KIND].tolist(), strict=True)]


def encode(values: list[Any], timestamps: list[int | None] | None = None) -> tuple[list[bytes], list[int]]:
    """The ``_value`` and ``_kind`` of records holding ``values`` (with their event ``timestamps``, if any).

    >>> encode([Row.of(RowKind.DELETE, ["a"]), "b"], [7, None])[1]
    [3, 0]
    """
    times = timestamps if timestamps is not None else [None] * len(values)
    return ([dumps(v, t) for v, t in zip(values, times, strict=True)], [kind_of(v) for v in values])


def records_of(values: list[Any], stamps: list[Stamp] | dict[str, np.ndarray], keys: Any = None,
               timestamps: list[int | None] | None = None) -> pd.DataFrame:
    """A record frame of user values (:func:`encode`): ``keys`` are pickled keys, as :func:`record_frame` takes.

    >>> frame = records_of([Row.of(RowKind.UPDATE_BEFORE, ["a"])], [(4, 0)])
    >>> frame["_kind"].tolist(), str(values_of(frame)[0].get_row_kind())
    ([1], '-U')
    """
    blobs, kinds = encode(values, timestamps)
    return record_frame(blobs, stamps, keys, kinds)


def record_frame(values: Any, stamps: list[Stamp] | dict[str, np.ndarray], keys: Any = None,
                 kinds: Any = None) -> pd.DataFrame:
    """A record frame: ``_key`` (when ``keys`` is given), ``_value``, ``_kind`` and the stamp columns.

    ``stamps`` are the rows' stamps, or stamp columns as :func:`~changeflow.kernels.order.stamp_arrays`
    gives them; ``kinds`` the rows' ``_kind`` (default: every row ``+I``; a kernel writing user values
    gives their kinds, or calls :func:`records_of`).

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
