"""A streaming query's figures so far, summed from Spark's progress reports (plain Python: no Spark import).

Spark reports each micro-batch of a query (``StreamingQuery.lastProgress`` /
``recentProgress``: a dict per batch). :class:`Totals` adds them up once per batch,
for the progress line on a terminal (:mod:`changeflow.runtime.spark.progress`) and for
an INSERT job's ``get_metrics()`` (:mod:`changeflow.runtime.insert_job`).
"""

from __future__ import annotations


class Totals:
    """The figures of a query's micro-batches so far, from Spark's progress reports."""

    def __init__(self) -> None:
        self.batch = -1
        self.rows_in = 0
        self.rows_out = -1  # unknown until a sink reports a count
        self.rate = 0.0
        self.state_rows = 0

    def add(self, report: dict | None) -> None:
        """Count one ``lastProgress`` report (the same micro-batch twice counts once)."""
        if not report or report.get("batchId", -1) <= self.batch:
            return
        self.batch = report["batchId"]
        self.rows_in += int(report.get("numInputRows") or 0)
        self.rate = float(report.get("processedRowsPerSecond") or 0.0)
        sink = report.get("sink") or {}
        out = int(sink.get("numOutputRows", -1) if sink.get("numOutputRows") is not None else -1)
        if out >= 0:  # -1: the sink does not count its rows (foreachBatch), and no figure is shown
            self.rows_out = max(self.rows_out, 0) + out
        self.state_rows = sum(int(op.get("numRowsTotal") or 0) for op in report.get("stateOperators") or [])

    def line(self) -> str:
        if self.batch < 0:
            return "[changeflow] starting the query ..."
        parts = [f"micro-batch {self.batch}", f"{self.rows_in:,} rows read", f"{self.rate:,.0f} rows/s"]
        if self.rows_out >= 0:
            parts.append(f"{self.rows_out:,} changes out")
        if self.state_rows:
            parts.append(f"{self.state_rows:,} state rows")
        return "[changeflow] " + " · ".join(parts)

    def as_dict(self) -> dict:
        """The figures by name: ``micro_batches``, ``rows_read``, ``rows_per_second`` (the last batch's),
        ``changes_out`` (None when the sink does not count its rows) and ``state_rows``."""
        return {"micro_batches": self.batch + 1, "rows_read": self.rows_in, "rows_per_second": self.rate,
                "changes_out": self.rows_out if self.rows_out >= 0 else None, "state_rows": self.state_rows}
