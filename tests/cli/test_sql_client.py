"""changeflow's SQL client without Spark: scripts cut into statements, Flink's messages, the shell's loop."""

from __future__ import annotations

import io

import pytest

from changeflow.cli.client import HELP, Quit, SqlClient
from changeflow.cli.main import main, run_file
from changeflow.cli.script import is_complete, statements
from changeflow.cli.shell import run_shell
from changeflow.table import EnvironmentSettings, TableEnvironment


def client(**kwargs) -> tuple[SqlClient, io.StringIO]:
    out = io.StringIO()
    return SqlClient(TableEnvironment.create(EnvironmentSettings.in_streaming_mode()), out, **kwargs), out


def test_a_script_is_cut_at_semicolons_outside_strings_names_and_comments():
    script = ("SET 'k' = 'a;b';\n"
              "/* one; comment */ CREATE TABLE `t;1` (a INT) WITH ('connector' = 'blackhole');\n"
              "-- a line comment; not a statement\n"
              ";;\n"
              "SELECT 'x;'\n  FROM t")
    parts = statements(script)
    assert [p.source for p in parts] == [
        "SET 'k' = 'a;b'",
        "/* one; comment */ CREATE TABLE `t;1` (a INT) WITH ('connector' = 'blackhole')",
        "SELECT 'x;'\n  FROM t",
    ]
    assert [p.line for p in parts] == [1, 2, 5]
    assert parts[-1].line == 5 and not parts[-1].complete
    # The text before a statement is blanked, newlines kept: positions are the script's.
    assert parts[-1].text.count("\n") == 5 and parts[-1].text.lstrip().startswith("SELECT")


def test_interactive_input_is_complete_only_at_a_closing_semicolon():
    assert not is_complete("SELECT 1")
    assert not is_complete("SELECT 'a;")          # an open string goes on on the next line
    assert not is_complete("SELECT 1 -- ;")       # a semicolon in a comment ends nothing
    assert is_complete("SELECT 1;")
    assert is_complete("SELECT 1\n  FROM t;  -- done")


def test_statements_print_flinks_messages():
    c, out = client()
    assert c.run("SET 'sql-client.execution.result-mode' = 'tableau'")
    assert c.run("CREATE TABLE t (a INT) WITH ('connector' = 'blackhole')")
    assert c.run("SHOW TABLES")
    assert c.run("RESET 'sql-client.execution.result-mode'")
    assert out.getvalue().split("\n") == [
        "[INFO] Execute statement succeeded.", "",
        "[INFO] Execute statement succeeded.", "",
        "+------------+", "| table name |", "+------------+", "|          t |", "+------------+", "1 row in set", "",
        "[INFO] Execute statement succeeded.", "", ""]


def test_an_error_is_one_message_naming_the_statements_problem_and_the_client_goes_on():
    c, out = client()
    assert not c.run("CREATE TABLE t (a INTEGR) WITH ('connector' = 'blackhole')")
    text = out.getvalue()
    assert text.startswith("[ERROR] Could not execute SQL statement. Reason:\n")
    assert "INTEGR" in text and "Traceback" not in text
    assert c.run("SHOW TABLES")  # the session goes on


def test_verbose_prints_the_traceback():
    c, out = client(verbose=True)
    assert not c.run("DROP TABLE nowhere")
    assert "Traceback (most recent call last)" in out.getvalue()


def test_a_query_from_a_file_needs_the_tableau_result_mode_as_in_flink():
    c, out = client()
    assert not c.run("SELECT 1")  # refused before anything runs: no Spark started
    assert "only supports to use TABLEAU as value of sql-client.execution.result-mode" in out.getvalue()


def test_help_quit_and_statement_set_commands():
    c, out = client()
    assert c.run("help")
    assert HELP in out.getvalue()
    with pytest.raises(Quit):
        c.run("QUIT")
    assert not c.run("END")
    assert 'No Statement Set to submit, "END;" command should be used after "BEGIN STATEMENT SET;".' in out.getvalue()
    out.truncate(0)
    out.seek(0)
    assert c.run("BEGIN STATEMENT SET")
    assert not c.run("SHOW TABLES")
    assert "Only INSERT statement is allowed in Statement Set." in out.getvalue()
    assert c.run("END")
    assert "[INFO] No statement in the statement set, skip submit." in out.getvalue()


def test_a_script_stops_at_its_first_failing_statement(tmp_path):
    script = tmp_path / "job.sql"
    script.write_text("CREATE TABLE t (a INT) WITH ('connector' = 'blackhole');\n"
                      "DROP TABLE missing;\n"
                      "CREATE TABLE u (a INT) WITH ('connector' = 'blackhole');\n")
    c, out = client()
    assert not run_file(c, str(script))
    assert "CREATE TABLE u" not in out.getvalue()
    assert c.t_env.list_tables() == ["t"]


def test_the_command_exits_with_1_on_a_failing_script_and_reads_init_and_options(tmp_path, capsys):
    init = tmp_path / "init.sql"
    init.write_text("CREATE TABLE t (a INT) WITH ('connector' = 'blackhole');\n")
    job = tmp_path / "job.sql"
    job.write_text("SHOW TABLES;\nSET;\nDROP TABLE missing;\n")
    assert main(["sql", "-D", "table.exec.state.ttl=1 h", "-i", str(init), "-f", str(job)]) == 1
    out = capsys.readouterr().out
    assert f"Successfully initialized from sql script: {init}" in out
    assert "|          t |" in out and "table.exec.state.ttl" in out
    assert "[ERROR] Could not execute SQL statement." in out
    assert main(["sql", "-D", "tabel.exec.state.ttl=1 h", "-f", str(job)]) == 1  # a misspelt key names itself
    assert "Did you mean 'table.exec.state.ttl'?" in capsys.readouterr().out


def test_the_shell_reads_multi_line_statements_and_survives_errors_and_ctrl_c():
    c, out = client(interactive=True)
    typed = iter(["CREATE TABLE t (a INT)", "  WITH ('connector' = 'blackhole');", "DROP TABLE nowhere;",
                  KeyboardInterrupt, "SHOW", "TABLES;", "QUIT;", "SHOW TABLES;"])
    prompts = []

    def read(prompt: str) -> str:
        prompts.append(prompt)
        line = next(typed)
        if line is KeyboardInterrupt:
            raise KeyboardInterrupt
        return line

    run_shell(c, read)
    text = out.getvalue()
    assert prompts == ["Flink SQL> ", "> ", "Flink SQL> ", "Flink SQL> ", "Flink SQL> ", "> ", "Flink SQL> "]
    assert text.count("[INFO] Execute statement succeeded.") == 1
    assert "[ERROR] Could not execute SQL statement." in text
    assert "|          t |" in text
    assert text.rstrip().endswith("[INFO] Exiting changeflow SQL client...")
