"""Several plans' changelog frames as one Structured Streaming query, and its batches split again.

A statement set's INSERTs run as one job: each plan is translated on its own
(its own translator and source directories) and the frames are unioned into ONE
query. Every row carries the number of its frame (``__sink``)
and its columns packed in that frame's struct column (the others NULL), so frames
of different schemas union. Each micro-batch is split by number again
(:func:`frame_rows`). The plans share nothing else: each source feeds only its own
frame, and a frame's operators see only its rows, so each plan's changes are those
it gives alone. Used by statement sets (:mod:`.multi_sink`).
"""

from __future__ import annotations

import functools

import pyarrow as pa
from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.sql.types import StructField, StructType

from changeflow.kernels.changelog import KIND, SEQ, SUB

FRAME = "__sink"


def value_columns(frame: DataFrame) -> list[str]:
    """A changelog frame's value columns (all but the bookkeeping columns)."""
    return [n for n in frame.columns if n not in (KIND, SEQ, SUB)]


def combine(frames: list[DataFrame]) -> tuple[DataFrame, list[list[str]]]:
    """One frame of every frame's changes: ``__sink``, the bookkeeping columns, a struct column per frame;
    and each frame's value columns."""
    names = [value_columns(f) for f in frames]
    # Every field nullable: a frame's struct is NULL in the other frames' rows, and Arrow refuses a NULL
    # struct whose fields are NOT NULL (a frame's own fields' nullability is checked by its own plan).
    columns = [[F.col(f"`{n}`") for n in cols] for cols in names]
    types = [StructType([StructField(field.name, field.dataType, True) for field in f.select(*c).schema.fields])
             for f, c in zip(frames, columns, strict=True)]
    structs = [F.struct(*c).cast(t) for c, t in zip(columns, types, strict=True)]
    parts = []
    for i, frame in enumerate(frames):
        packed = [structs[j].alias(f"_row{j}") if j == i else F.lit(None).cast(types[j]).alias(f"_row{j}")
                  for j in range(len(frames))]
        parts.append(frame.select(F.lit(i).alias(FRAME), KIND, SEQ, SUB, *packed))
    return functools.reduce(DataFrame.unionAll, parts), names


def frame_rows(table: pa.Table, index: int, names: list[str]) -> pa.Table:
    """The rows of frame ``index`` of a combined batch, with its columns unpacked, and the bookkeeping columns."""
    rows = table.filter(pa.array(table.column(FRAME).to_numpy() == index))
    packed = rows.column(f"_row{index}").combine_chunks()
    columns = {n: packed.field(k) for k, n in enumerate(names)}  # type: ignore[attr-defined]
    columns.update({c: rows.column(c) for c in (KIND, SEQ, SUB)})
    return pa.table(columns)
