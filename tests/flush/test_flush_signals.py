"""The flush run that ends a job over an unbounded Spark stream (runtime/spark/flush_signals.py), without Spark."""

from __future__ import annotations

import pyarrow.parquet as pq

from changeflow.runtime.spark.control_rows import FLUSH
from changeflow.runtime.spark.flush_signals import SIGNAL_COLUMN, run_to_end, send_flush


class FakeQuery:
    def __init__(self, log: list[str], name: str) -> None:
        self.log, self.name = log, name

    def awaitTermination(self) -> None:
        self.log.append(f"{self.name} ended")


def starter(log: list[str]):
    def start():
        name = f"run {sum(1 for e in log if e.startswith('start'))}"
        log.append(f"start {name}")
        return FakeQuery(log, name)
    return start


def test_signals_are_new_visible_files_holding_one_flush(tmp_path):
    send_flush([str(tmp_path)])
    send_flush([str(tmp_path)])
    names = sorted(p.name for p in tmp_path.iterdir())
    assert names == ["flush-00000000.parquet", "flush-00000001.parquet"]  # none left hidden
    assert pq.read_table(tmp_path / names[1]).column(SIGNAL_COLUMN).to_pylist() == [FLUSH]


def test_a_query_with_signal_streams_runs_once_more_after_the_signal(tmp_path):
    log: list[str] = []
    run_to_end(starter(log), [str(tmp_path)])
    assert log == ["start run 0", "run 0 ended", "start run 1", "run 1 ended"]
    assert len(list(tmp_path.iterdir())) == 1


def test_no_flush_run_without_signal_streams_or_after_a_cancel(tmp_path):
    log: list[str] = []
    run_to_end(starter(log), [])
    assert log == ["start run 0", "run 0 ended"]
    log.clear()
    run_to_end(starter(log), [str(tmp_path)], cancelled=lambda: True)
    assert log == ["start run 0", "run 0 ended"] and not list(tmp_path.iterdir())
    run_to_end(lambda: None, [str(tmp_path)])  # cancelled before its query existed
    assert not list(tmp_path.iterdir())
