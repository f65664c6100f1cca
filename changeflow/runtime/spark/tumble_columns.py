"""TUMBLE window columns over a TIMESTAMP time attribute outside a session zone, by Spark's ``window()``.

The general path (:func:`~.event_time.window_frame`) computes a row's windows in epoch
milliseconds; this one avoids the casts between TIMESTAMP_NTZ and TIMESTAMP it needs (see
:func:`tumble_plain`) for the most common window, with the same windows.
"""

from __future__ import annotations

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from changeflow.plan.event_time import WindowTableFunction


def tumble_plain(frame: DataFrame, node: WindowTableFunction, bookkeeping: list[str]) -> DataFrame:
    """TUMBLE over a TIMESTAMP time attribute outside a session zone: the windows by Spark's own ``window()``.

    The general path goes through epoch milliseconds, and every cast between TIMESTAMP_NTZ and
    TIMESTAMP runs java.time for each row even in UTC (Spark's ``convertTz``): three per row here,
    a third of the JVM CPU of the event-time window benchmark's packing stage (docs/benchmarks.md).
    ``window()`` computes on the value's microseconds, start ``t - (t - offset) mod size``: the windows
    of the millisecond formula, since a whole number of milliseconds divides both (floor(floor(us / 1000)
    / n) = floor(us / (1000 n))). ``window()`` drops rows whose time is null (a control row): its
    argument is never null here, and such a row gets null windows as on the general path.
    """
    w = node.window
    time = F.col(f"`{node.time_column}`")
    size = f"{w.size_ms} milliseconds"
    spark_window = F.window(F.coalesce(time, F.lit("1970-01-01 00:00:00").cast("timestamp_ntz")), size, size,
                            f"{w.offset_ms % w.size_ms} milliseconds")

    def nulls_kept(c: Column) -> Column:
        return F.when(time.isNull(), F.lit(None).cast("timestamp_ntz")).otherwise(c)

    start, end = nulls_kept(spark_window.start), nulls_kept(spark_window.end)
    # window_time, end - 1 ms, by TIMESTAMP arithmetic (java.time per row, but only where a query reads it).
    out = [F.col(f"`{n}`") for n in node.input.field_names]
    return frame.select(*out, start.alias("window_start"), end.alias("window_end"),
                        (end - F.expr("INTERVAL '0.001' SECOND")).alias("window_time"), *bookkeeping)
