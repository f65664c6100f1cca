"""Spark's console output goes to a log file while changeflow's JVM starts (runtime/spark/console_log.py)."""

from __future__ import annotations

import os

from changeflow.runtime.spark import console_log


def test_the_log_setting_names_a_file_or_the_console(tmp_path, monkeypatch):
    monkeypatch.setenv("CHANGEFLOW_TMP_ROOT", str(tmp_path))
    monkeypatch.setattr(console_log.temp_root, "_process_dir", None)
    assert console_log.target("console") is None
    assert console_log.target(" CONSOLE ") is None
    assert console_log.target(str(tmp_path / "x.log")) == str(tmp_path / "x.log")
    default = console_log.target(None)
    assert default is not None and default.startswith(str(tmp_path)) and default.endswith("spark.log")


def test_descriptors_point_back_at_the_terminal_after_the_start(tmp_path, capfd):
    log = tmp_path / "out.log"
    with console_log.jvm_output_to(str(log)):
        os.write(1, b"to the log 1\n")
        os.write(2, b"to the log 2\n")
    os.write(1, b"to the terminal\n")
    assert log.read_text() == "to the log 1\nto the log 2\n"
    assert capfd.readouterr().out == "to the terminal\n"
