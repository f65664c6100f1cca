"""The final flush of a job that reads an unbounded Spark stream up to what is available now.

A job over a user's streaming DataFrame (``from_spark`` / ``from_source``) runs
with Spark's ``availableNow`` trigger: it reads what the stream holds when it
starts and ends. No end-of-input marker follows such a stream (it is not over:
a named job resumes it later), and with no-data micro-batches off no timer
fires after the last micro-batch, so operators buffering their output for a
flush interval (:mod:`.flush`) would end the job still holding the last
updates of their keys. Running out of available input is idle input, rule (b)
of the flush interval, so the job flushes them:

- each such stream is unioned with a *signal stream*, a Parquet file source in
  a directory of the job's own that is empty while the job reads its input;
- when the query has ended, the job writes one flush signal into every signal
  directory and runs the query once more from its checkpoint: that micro-batch
  carries the signals (and whatever input arrived in between, processed
  first), every buffering operator flushes, and its flush signal travels down
  the chain as an upstream flush does.

The second run costs one more query start (a few seconds), paid only by jobs
that buffer (not memory-only) over an unbounded Spark stream.
"""

from __future__ import annotations

from typing import Callable, Sequence

import pyarrow as pa
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T

from changeflow.connectors import filestore
from changeflow.kernels.changelog import KIND, SEQ, SUB
from changeflow.runtime.spark.control_rows import CONTROL, FLUSH
from changeflow.runtime.spark.query_start import await_query

SIGNAL_COLUMN = "signal"


def signal_stream(spark: SparkSession, directory: str) -> DataFrame:
    """A stream of the flush signals written into ``directory`` (one ``signal`` column, ``FLUSH``).

    ``directory`` is a local path or a Hadoop URI (:mod:`changeflow.connectors.filestore`).
    """
    from changeflow.runtime.spark.job_directory import require_shared
    from changeflow.runtime.spark.shipping import master_url

    require_shared(master_url(spark.sparkContext), directory, "the flush signal stream of an unbounded source")
    filestore.store_for(directory).makedirs(directory)
    return spark.readStream.schema(f"{SIGNAL_COLUMN} long").parquet(directory)


def signal_rows(spark: SparkSession, directory: str, fields: list[T.StructField]) -> DataFrame:
    """The flush signals written into ``directory`` as control rows, to union with the source they follow.

    ``fields`` are the source's payload columns, a Table source's or a DataStream
    record's ``_value``: the signals become control rows, values null, ``_kind``
    CONTROL, ``_seq`` FLUSH (:mod:`.control_rows`).
    """
    signals = signal_stream(spark, directory)
    return signals.select(*[F.lit(None).cast(f.dataType).alias(f.name) for f in fields],
                          F.lit(CONTROL).cast("byte").alias(KIND), F.col(SIGNAL_COLUMN).alias(SEQ),
                          F.lit(0).cast("long").alias(SUB))


def send_flush(directories: Sequence[str]) -> None:
    """Write one flush signal into each signal directory (a new file: the file source reads each once)."""
    for directory in directories:
        store = filestore.store_for(directory)
        name = f"flush-{len(store.entries(directory)):08d}.parquet"
        hidden = filestore.join(directory, "." + name)  # the file source skips hidden files until the rename
        filestore.write_parquet(hidden, pa.table({SIGNAL_COLUMN: pa.array([FLUSH], pa.int64())}))
        store.replace(hidden, filestore.join(directory, name))


def run_to_end(start: Callable[[], object], directories: Sequence[str],
               cancelled: Callable[[], bool] = lambda: False) -> None:
    """Run an ``availableNow`` query (``start()`` starts it) to its end, then flush (see the module docstring).

    ``start`` may return None when the job was cancelled before its query
    existed; no flush run follows a cancelled job (``cancelled()``). A query
    that fails transiently runs again from its checkpoint (:func:`.query_start.await_query`).
    """
    query = start()
    if query is None:
        return
    # Raises the query's error, if it failed; a transient failure restarts the query from its checkpoint.
    await_query(query, start)
    if directories and not cancelled():
        send_flush(directories)
        await_query(start(), start)
