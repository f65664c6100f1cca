"""A program's console shows what the program prints, not Spark's chatter (changeflow.spark.log)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

pytestmark = pytest.mark.spark  # the demo starts a JVM of its own, in a child process

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_the_demo_prints_only_its_own_lines_and_spark_writes_to_the_log(tmp_path):
    root = tmp_path / "tmp"  # changeflow's temp root for the child: its log lands there by default
    done = subprocess.run([sys.executable, "examples/daily_uv.py"], cwd=ROOT, capture_output=True, text=True,
                          timeout=900, env={**os.environ, "CHANGEFLOW_TMP_ROOT": str(root)})
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    lines = done.stdout.splitlines()
    assert lines[0] == "mini-batch off:"
    assert "mini-batch on:" in lines
    assert lines[-1] == "+I <Row('2023-12-19', 3)>"
    # Every line is the program's: a table border or row, its header, the plan, or the collected row.
    allowed = ("+", "|", "mini-batch", "7 rows in set", "== Physical Plan ==", "Calc", " ", "")
    assert [line for line in lines if not line.startswith(allowed)] == []
    # What Spark printed is in the log instead: its log4j lines and the Python workers' lines.
    [log] = root.glob("*/spark.log")
    text = log.read_text()
    assert "TransformWithStateInPandas Python worker" in text
