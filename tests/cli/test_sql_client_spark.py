"""changeflow's SQL client on Spark: results as Flink's client shows them, INSERT jobs, the shell in a terminal."""

from __future__ import annotations

import io
import os
import re
import sys

import pytest

from changeflow.cli.client import SqlClient

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_a_script_shows_streaming_and_batch_results_and_runs_insert_jobs(stream_env, tmp_path):
    out = io.StringIO()
    c = SqlClient(stream_env, out)
    path = tmp_path / "sink"
    script = [
        "SET 'sql-client.execution.result-mode' = 'tableau'",
        # Flink's SQL client example: a streaming result is a changelog.
        "SELECT name, COUNT(*) AS cnt FROM (VALUES ('Bob'), ('Alice'), ('Greg'), ('Bob')) AS NameTable(name) "
        "GROUP BY name",
        f"CREATE TABLE s (name STRING, cnt BIGINT) WITH ('connector' = 'filesystem', 'path' = '{path}', "
        "'format' = 'csv')",
        "BEGIN STATEMENT SET",
        "INSERT INTO s VALUES ('a', 1)",
        "END",
        "SET 'table.dml-sync' = 'true'",
        "INSERT INTO s VALUES ('b', 2)",
        "SET 'execution.runtime-mode' = 'batch'",
        "SELECT name, cnt FROM s ORDER BY name",
    ]
    assert all(c.run(statement) for statement in script)
    assert c.wait_for_jobs()
    text = re.sub(r"\(\d+\.\d\d seconds\)", "(T seconds)", out.getvalue())
    assert """+----+--------------------------------+----------------------+
| op |                           name |                  cnt |
+----+--------------------------------+----------------------+
| +I |                            Bob |                    1 |
| +I |                          Alice |                    1 |
| +I |                           Greg |                    1 |
| -U |                            Bob |                    1 |
| +U |                            Bob |                    2 |
+----+--------------------------------+----------------------+
Received a total of 5 rows (T seconds)
""" in text
    assert "[INFO] Begin a statement set.\n\n[INFO] Add SQL update statement to the statement set.\n" in text
    assert re.search(r"\[INFO\] SQL update statement has been successfully submitted to the cluster:\n"
                     r"Job ID: [0-9a-f]{32}\n", text)
    assert "[INFO] Complete execution of the SQL update statement.\n" in text
    # A batch result is sized by its content, as Flink's client prints it.
    assert """+------+-----+
| name | cnt |
+------+-----+
|    a |   1 |
|    b |   2 |
+------+-----+
2 rows in set (T seconds)
""" in text


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
