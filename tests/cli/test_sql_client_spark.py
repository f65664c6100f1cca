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
