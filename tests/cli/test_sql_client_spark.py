"""changeflow's SQL client on Spark: results as Flink's client shows them, INSERT jobs, the shell in a terminal."""

from __future__ import annotations

import io
import json
import os
import sys

import pytest

from changeflow.cli.client import SqlClient
from changeflow.cli.main import run_file
from conformance.sql_client_output import normalise

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPT_DIR = os.path.join(ROOT, "conformance", "sql_client_scripts")
GOLDENS = os.path.join(ROOT, "conformance", "goldens", "sql_client")
SCRIPTS = sorted(name[:-4] for name in os.listdir(SCRIPT_DIR) if name.endswith(".sql"))

# The shell tests start Spark in a child process (no fixture to mark them by): marked here, they need Java
# as the `spark` marker says, and they run among the Spark tests, early, not among the fast tests at the
# end of a run, where a test of a minute kept one test process busy after the other had finished.
pytestmark = pytest.mark.spark


@pytest.mark.parametrize("script", SCRIPTS)
def test_a_script_prints_what_flinks_sql_client_prints(stream_env, script):
    """The script's output, normalised, equals Flink 2.3's sql-client.sh output for it (a golden)."""
    with open(os.path.join(GOLDENS, f"{script}.json")) as f:
        golden = json.load(f)
    out = io.StringIO()
    client = SqlClient(stream_env, out)
    run_file(client, os.path.join(SCRIPT_DIR, f"{script}.sql"))
    assert client.wait_for_jobs()
    assert normalise(out.getvalue()) == golden["lines"]


def test_the_shell_in_a_terminal_runs_multi_line_statements_and_ctrl_c_ends_a_running_query(tmp_path):
    pexpect = pytest.importorskip("pexpect")
    env = {**os.environ, "CHANGEFLOW_TMP_ROOT": str(tmp_path), "HOME": str(tmp_path), "TERM": "dumb"}
    shell = pexpect.spawn(sys.executable, ["-m", "changeflow.cli", "sql"], cwd=ROOT, env=env, encoding="utf-8",
                          timeout=300)
    try:
        shell.expect_exact("Flink SQL> ")
        shell.sendline("SET 'sql-client.execution.result-mode' = 'tableau';")  # Flink's default is TABLE
        shell.expect_exact("[INFO] Execute statement succeeded.")
        shell.sendline("CREATE TABLE gen (v BIGINT)")
        shell.expect_exact("> ")
        shell.sendline("  WITH ('connector' = 'datagen', 'rows-per-second' = '5', 'fields.v.kind' = 'sequence', "
                       "'fields.v.start' = '1', 'fields.v.end' = '1000000');")
        shell.expect_exact("[INFO] Execute statement succeeded.")
        shell.sendline("SELECT nosuchcol FROM gen;")  # a bad statement: its message, and the shell goes on
        shell.expect_exact("[ERROR] Could not execute SQL statement. Reason:")
        shell.expect("column 'nosuchcol' not found")
        shell.sendline("SELECT v FROM gen;")  # unbounded: runs until Ctrl-C
        shell.expect(r"\| \+I \|\s+1 \|")
        shell.sendintr()  # ends the query, as in Flink's client: its rows so far stay on the screen
        shell.expect_exact("[INFO] Result retrieval cancelled.")
        shell.expect_exact("Flink SQL> ")
        shell.sendline("SHOW TABLES;")
        shell.expect_exact("|        gen |")
        shell.sendline("QUIT;")
        shell.expect_exact("[INFO] Exiting changeflow SQL client...")
        shell.expect(pexpect.EOF)
    finally:
        shell.close(force=True)
    assert shell.exitstatus == 0, shell.before


GROUP_BY = "SELECT word, COUNT(*) AS cnt FROM (VALUES ('hello'), ('world'), ('hello')) AS t(word) GROUP BY word;"


def test_the_table_and_changelog_result_modes_are_full_screen_views_that_q_leaves(tmp_path):
    """TABLE (Flink's default) shows the table a GROUP BY's changelog builds, CHANGELOG its -U/+U changes."""
    pexpect = pytest.importorskip("pexpect")
    env = {**os.environ, "CHANGEFLOW_TMP_ROOT": str(tmp_path), "HOME": str(tmp_path), "TERM": "xterm"}
    shell = pexpect.spawn(sys.executable, ["-m", "changeflow.cli", "sql"], cwd=ROOT, env=env, encoding="utf-8",
                          timeout=600, dimensions=(20, 90))
    try:
        shell.expect_exact("Flink SQL> ")
        shell.sendline(GROUP_BY)
        shell.expect_exact("\x1b[?1049h")  # the terminal's alternate screen: the shell's lines stay behind it
        shell.expect_exact("SQL Query Result (Table)")
        shell.expect_exact("Table program finished.")  # a bounded query: its last snapshot is on the screen
        shell.expect(r"\n +world +1\r?\n +hello +2\r?\n")  # hello's -U removed its first row: one row per word
        shell.send("q")
        shell.expect_exact("\x1b[?1049l")  # back to the shell's screen
        shell.expect_exact("[INFO] Result retrieval cancelled.")
        shell.expect_exact("Flink SQL> ")
        shell.sendline("SET 'sql-client.execution.result-mode' = 'changelog';")
        shell.expect_exact("[INFO] Execute statement succeeded.")
        shell.sendline(GROUP_BY)
        shell.expect_exact("SQL Query Result (Changelog)")
        shell.expect_exact("Table program finished.")
        shell.expect(r"\n \+I +hello +1\r?\n \+I +world +1\r?\n -U +hello +1\r?\n \+U +hello +2\r?\n")
        shell.send("\x03")  # Ctrl-C leaves the view, as Q does, and not the shell
        shell.expect_exact("[INFO] Result retrieval cancelled.")
        shell.expect_exact("Flink SQL> ")
        shell.sendline("QUIT;")
        shell.expect_exact("[INFO] Exiting changeflow SQL client...")
        shell.expect(pexpect.EOF)
    finally:
        shell.close(force=True)
    assert shell.exitstatus == 0, shell.before
