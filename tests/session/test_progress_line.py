"""The progress line of a running streaming query (runtime/spark/progress.py), without Spark."""

from __future__ import annotations

import io

from changeflow.runtime.query_progress import Totals
from changeflow.runtime.spark import progress


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


class Query:
    """A query whose progress reports are read from a list, as Spark's lastProgress."""

    def __init__(self, reports):
        self.reports = list(reports)

    @property
    def lastProgress(self):  # noqa: N802  (Spark's name)
        return self.reports.pop(0) if len(self.reports) > 1 else self.reports[0]


def report(batch, rows_in, rows_out, state_rows, rate=1000.0):
    return {"batchId": batch, "numInputRows": rows_in, "processedRowsPerSecond": rate,
            "sink": {"numOutputRows": rows_out}, "stateOperators": [{"numRowsTotal": state_rows}]}


def test_totals_sum_each_micro_batch_once():
    totals = Totals()
    assert totals.line() == "[changeflow] starting the query ..."
    for r in (report(0, 1000, 10, 5), report(0, 1000, 10, 5), report(1, 2500, 30, 7, rate=48102.4), None):
        totals.add(r)
    assert totals.line() == ("[changeflow] micro-batch 1 · 3,500 rows read · 48,102 rows/s · 40 changes out · "
                             "7 state rows")


def test_the_line_is_drawn_on_a_terminal_and_erased_at_the_end(monkeypatch):
    monkeypatch.setattr(progress, "INTERVAL_S", 0.01)
    monkeypatch.delenv(progress.ENV, raising=False)
    terminal = Terminal()
    query = Query([report(0, 10, 1, 0), report(1, 20, 2, 0)])
    with progress.shown(query, terminal):
        import time
        time.sleep(0.2)
    text = terminal.getvalue()
    assert "\r[changeflow] micro-batch 1 · 30 rows read" in text
    assert text.endswith("\r\x1b[K")


def test_nothing_is_drawn_off_a_terminal_or_when_switched_off(monkeypatch):
    monkeypatch.setattr(progress, "INTERVAL_S", 0.01)
    pipe = io.StringIO()
    with progress.shown(Query([report(0, 1, 1, 0)]), pipe):
        pass
    assert pipe.getvalue() == ""
    monkeypatch.setenv(progress.ENV, "0")
    terminal = Terminal()
    with progress.shown(Query([report(0, 1, 1, 0)]), terminal):
        pass
    assert terminal.getvalue() == ""


def test_a_sink_that_does_not_count_its_rows_shows_no_figure():
    totals = Totals()
    totals.add({"batchId": 0, "numInputRows": 4, "processedRowsPerSecond": 2.0, "sink": {"numOutputRows": -1}})
    assert totals.line() == "[changeflow] micro-batch 0 · 4 rows read · 2 rows/s"


def test_an_insert_jobs_metrics_sum_its_querys_recent_progress():
    from changeflow.runtime.insert_job import InsertJob

    class Recent:
        recentProgress = [report(0, 100, 4, 3), report(1, 50, 2, 5, rate=25.0)]  # noqa: N815  (Spark's name)

    def run(job):
        job.query = Recent()

    job = InsertJob(run)
    job.wait()
    assert job.get_metrics() == {"status": "FINISHED", "micro_batches": 2, "rows_read": 150, "rows_per_second": 25.0,
                                 "changes_out": 6, "state_rows": 5}
    assert len(job.get_job_id()) == 32
