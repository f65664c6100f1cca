"""Ships a stateful operator's input to its hash buckets as a few packed rows, not row by row.

pyspark's worker for ``transformWithStateInPandas`` (Spark 4.3) regroups its
input one row at a time in Python (``itertuples``, ``itertools.groupby``,
then ``pd.DataFrame`` of the row tuples): about 3.4 µs per row, which was
nearly all of a 4M-row micro-batch's time in the keyed-aggregation benchmark.
``mapInPandas`` instead converts whole Arrow batches.

So the stage before the shuffle, a ``mapInPandas`` over each partition of the
micro-batch, computes every row's bucket itself, pickles each bucket's rows
(as one pandas frame, in the dtypes the kernel reads) and emits one row
``(_bucket, _payload)`` per bucket and chunk. Spark shuffles those few rows by
``_bucket``; the stateful processor unpickles and concatenates them. The
two-phase local aggregation runs in the same stage, before packing.

Payloads are produced and consumed by changeflow's own workers within one
micro-batch; nothing else ever unpickles them.
"""

from __future__ import annotations

import pickle
from typing import Any, Callable, Iterator, Sequence

import numpy as np
import pandas as pd
from pyspark.sql import types as T

from changeflow.kernels.changelog import BOOKKEEPING
from changeflow.runtime.spark.buckets import bucket_ids

BUCKET = "_bucket"
PAYLOAD = "_payload"
# What a Packer yields: one row per (bucket, payload chunk); the stateful operators group by BUCKET.
PACKED = T.StructType([T.StructField(BUCKET, T.LongType(), False), T.StructField(PAYLOAD, T.BinaryType(), False)])
# Rows per payload: a few MB each, far below Spark's 2 GB limit on a binary value,
# and few enough per bucket that the worker's row-by-row regrouping costs nothing.
_ROWS_PER_PAYLOAD = 1 << 18


class Packer:
    """The function given to ``mapInPandas``: a partition's changelog rows in, packed buckets out.

    ``input_columns`` names the columns Spark sends, in order; ``dtypes`` the
    pandas dtype each is normalised to (:func:`normalize`);
    ``local`` is an optional pre-aggregation (the local phase of two-phase
    aggregation), which then sees the partition's whole micro-batch at once;
    with ``assigner`` (a watermark assigner's number) it is a local window
    phase, also given the ``(position, watermark)`` pairs that assigner emitted
    in the partition.
    """

    def __init__(self, key_columns: list[str], buckets: int, input_columns: list[str], dtypes: dict[str, str],
                 local: Any = None, assigner: int | None = None) -> None:
        self.key_columns = list(key_columns)
        self.buckets = buckets
        self.input_columns = list(input_columns)
        self.dtypes = dict(dtypes)
        self.local = local
        self.assigner = assigner

    def __call__(self, frames: Iterator[pd.DataFrame],
                 watermarks: Callable[[], Sequence[tuple[int, int, int]]] | None = None) -> Iterator[pd.DataFrame]:
        # Consume the whole iterator: a local phase per Arrow batch would ship one
        # partial per key and batch, hardly fewer rows than the input.
        parts = [f for f in frames if len(f)]
        if not parts:
            return
        batch = pd.concat(parts, ignore_index=True) if len(parts) > 1 else parts[0]
        batch.columns = self.input_columns
        batch = normalize(batch, self.dtypes)
        if self.local is not None and self.assigner is not None:
            # A local window phase: the partition's own watermarks, which ``watermarks`` gives once
            # the frames are consumed (the control rows ride among them; .control_rows.ControlFanOut).
            marks = watermarks() if watermarks is not None else ()
            batch = self.local.process(batch, [(p, w) for n, p, w in marks if n == self.assigner])
        elif self.local is not None:
            batch = self.local.process(batch)
        packed = pack(batch, self.key_columns, self.buckets)
        if len(packed):
            yield packed


def pack(frame: pd.DataFrame, key_columns: list[str], buckets: int) -> pd.DataFrame:
    """``frame``'s rows pickled per bucket: one ``(_bucket, _payload)`` row per bucket and chunk.

    >>> packed = pack(pd.DataFrame({"k": [1, 2, 3, 1]}), ["k"], 2)
    >>> len(packed) <= 2, sorted(unpack(packed[PAYLOAD])["k"].tolist())
    (True, [1, 1, 2, 3])
    """
    index = bucket_index(frame, key_columns, buckets)
    order = np.argsort(index, kind="stable")
    sorted_index = index[order]
    starts = np.flatnonzero(np.r_[True, sorted_index[1:] != sorted_index[:-1]]) if len(order) else []
    ends = list(starts[1:]) + [len(order)]
    ids = bucket_ids(buckets)
    out_bucket, out_payload = [], []
    for start, end in zip(starts, ends, strict=True):
        for chunk in range(start, end, _ROWS_PER_PAYLOAD):
            rows = frame.take(order[chunk:min(end, chunk + _ROWS_PER_PAYLOAD)]).reset_index(drop=True)
            out_bucket.append(ids[int(sorted_index[start])])
            out_payload.append(pickle.dumps(rows, protocol=5))
    return pd.DataFrame({BUCKET: np.asarray(out_bucket, dtype=np.int64),
                         PAYLOAD: np.asarray(out_payload, dtype=object)})


def unpack(payloads: pd.Series) -> pd.DataFrame:
    """The rows of packed payloads, concatenated."""
    frames = [pickle.loads(p) for p in payloads]
    return pd.concat(frames, ignore_index=True) if len(frames) > 1 else frames[0]


def bucket_index(frame: pd.DataFrame, key_columns: list[str], buckets: int) -> np.ndarray:
    """The bucket (``0..buckets-1``) of each row's key: a stable hash, the same in every process.

    The high half of the hash picks the bucket; the paged state picks pages
    from the whole hash modulo the page count, so the two stay independent.
    """
    if not key_columns or not len(frame):
        return np.zeros(len(frame), dtype=np.int64)
    keys = frame[key_columns]
    floats = [c for c in key_columns if keys[c].dtype.kind == "f" or str(keys[c].dtype) == "Float64"]
    if floats:
        # -0.0 and 0.0 are one key to the kernel (pd.factorize): give them one bucket.
        keys = keys.assign(**{c: keys[c] + 0.0 for c in floats})
    hash_object = pd.util.hash_pandas_object  # pyright: ignore[reportAttributeAccessIssue] - a lazy module attribute
    hashes = hash_object(keys, index=False).to_numpy()
    return ((hashes >> np.uint64(32)) % np.uint64(buckets)).astype(np.int64)


def normalize(batch: pd.DataFrame, dtypes: dict[str, str]) -> pd.DataFrame:
    """Cast columns to the dtypes the kernels expect (nullable integers stay exact).

    Spark's Arrow conversion turns a nullable integer column into float64,
    which would lose the distinction between a number and NULL for the kernel.
    """
    for name, dtype in dtypes.items():
        if name in batch.columns and str(batch[name].dtype) != dtype:
            column = batch[name]
            if dtype.startswith("datetime64") and getattr(column.dtype, "tz", None) is not None:
                column = column.dt.tz_convert("UTC").dt.tz_localize(None)   # the job's zone is UTC
            batch[name] = column.astype(dtype)
    for name in BOOKKEEPING:
        if name in batch.columns:
            batch[name] = batch[name].astype("int8" if name == "_kind" else "int64")
    return batch
