"""Flink's SQL client on changeflow: statements run one by one, printed as ``sql-client.sh`` prints them.

The messages are Flink 2.3's (``[INFO] Execute statement succeeded.``, ``[ERROR] Could
not execute SQL statement. Reason:`` and the error's class and message), so a script's
output reads as it does under Flink. ``sql-client.execution.result-mode`` picks how a
query's result shows: ``TABLEAU`` prints rows as they arrive; in the interactive shell,
``TABLE`` (Flink's default) and ``CHANGELOG`` open Flink's full-screen views of the
materialized table or of the changes (:mod:`changeflow.cli.terminal_view`). A query run
from a file needs ``TABLEAU``, as Flink's client requires.

Where changeflow differs: Flink submits an ``INSERT`` to a cluster and the client can
exit while the job runs there; changeflow's jobs run in the client's process, so the
client waits, at the end of a script or on ``QUIT``, for the INSERT jobs it started.
"""

from __future__ import annotations

import contextlib
import sys
import time
import traceback
from typing import TextIO

from changeflow.cli.script import Statement
from changeflow.table import TableEnvironment
from changeflow.table.result import TableResult, query_changes, sql_client_tableau

RESULT_MODE = "sql-client.execution.result-mode"
MAX_TABLE_ROWS = "sql-client.execution.max-table-result.rows"

HELP = """The following commands are available:

HELP               \t\tPrints the available commands.
QUIT/EXIT          \t\tQuits the SQL CLI client.
CLEAR              \t\tClears the current terminal.
SET                \t\tSets a session configuration property. Syntax: "SET '<key>'='<value>';". Use "SET;" for listing all properties.
RESET              \t\tResets a session configuration property. Syntax: "RESET '<key>';". Use "RESET;" for reset all session properties.
INSERT INTO        \t\tInserts the results of a SQL SELECT query into a declared table sink.
SELECT             \t\tExecutes a SQL SELECT query on the cluster.
EXPLAIN            \t\tDescribes the execution plan of a query or table with the given name.
BEGIN STATEMENT SET\t\tBegins a statement set. Syntax: "BEGIN STATEMENT SET;"
END                \t\tEnds a statement set. Syntax: "END;"

Hint: Make sure that a statement ends with ";" for finalizing (multi-line) statements.
The SQL changeflow runs: docs/sql.md in changeflow's repository."""  # noqa: E501  (Flink's layout)


class Quit(Exception):
    """``QUIT;`` or ``EXIT;``: the client is to end."""


class SqlClient:
    """Runs SQL statements against one TableEnvironment and prints what Flink's SQL client prints.

    ``run`` takes one statement and returns whether it succeeded; an error is printed,
    never raised (``verbose`` prints its whole traceback instead of its message).
    """

    def __init__(self, t_env: TableEnvironment, out: TextIO | None = None, *, interactive: bool = False,
                 verbose: bool = False) -> None:
        self.t_env = t_env
        self.out = out if out is not None else sys.stdout
        self.interactive = interactive
        self.verbose = verbose
        self.jobs: list[TableResult] = []  # INSERT jobs started without table.dml-sync: waited for at the end
        self._statement_set = None  # the statement set between BEGIN STATEMENT SET and END
        self._color = bool(getattr(self.out, "isatty", lambda: False)())

    # --- messages, as Flink's CliStrings ----------------------------------------------------
    def info(self, message: str) -> None:
        self.write_line(self._paint(f"[INFO] {message}", "34;1"))

    def error(self, message: str, reason: str | None = None) -> None:
        text = f"[ERROR] {message}" + (f" Reason:\n{reason}" if reason is not None else "")
        self.write_line(self._paint(text, "31;1"))

    def _paint(self, text: str, code: str) -> str:
        return f"\x1b[{code}m{text}\x1b[0m" if self._color else text

    def write_line(self, text: str = "") -> None:
        """Print a line of the client's output."""
        print(text, file=self.out, flush=True)

    # --- statements ---------------------------------------------------------------------------
    def run(self, statement: Statement | str) -> bool:
        """Run one statement (without its ``;``); False when it failed (its error printed)."""
        if isinstance(statement, str):
            statement = Statement(statement, 1, True)
        words = statement.source.rstrip(";").split()
        command = " ".join(words).upper()
        try:
            if command in ("QUIT", "EXIT"):
                raise Quit()
            if command == "HELP":
                self.write_line(HELP)
            elif command == "CLEAR":
                self.write_line("\x1b[H\x1b[2J" if self._color else "")
            elif command == "BEGIN STATEMENT SET":
                self._begin_statement_set()
            elif command == "END":
                self._end_statement_set()
            else:
                self._execute(statement, words[0].upper() if words else "")
            return True
        except Quit:
            raise
        except KeyboardInterrupt:
            self.info("Result retrieval cancelled.")
            return False
        except Exception as e:  # every error of a statement is the user's to read, not a crash of the client
            self.error("Could not execute SQL statement.", self._reason(e))
            return False
        finally:
            self.write_line()

    def _reason(self, e: BaseException) -> str:
        if self.verbose:
            return "".join(traceback.format_exception(e)).rstrip()
        return f"{type(e).__module__}.{type(e).__qualname__}: {e}".removeprefix("builtins.")

    def _execute(self, statement: Statement, head: str) -> None:
        if self._statement_set is not None:
            if head != "INSERT":
                raise ValueError("Only INSERT statement is allowed in Statement Set.")
            self._statement_set.add_insert_sql(statement.text)
            self.info("Execute statement succeeded.")  # Flink 2.3's words for an INSERT added to the set
            return
        if head in ("SELECT", "WITH", "VALUES", "("):
            self._check_result_mode()  # before the query starts, so a refused mode runs nothing
        started = time.monotonic()
        result = self.t_env.execute_sql(statement.text)
        if head == "INSERT":
            self._submitted(result)
        elif head in ("SELECT", "WITH", "VALUES", "("):
            self._show_query(result, started)
        elif head in ("SHOW", "DESCRIBE", "DESC", "EXPLAIN") or (head == "SET" and len(statement.source.split()) == 1):
            with contextlib.redirect_stdout(self.out):
                result.print()
        else:
            self.info("Execute statement succeeded.")

    def _result_mode(self) -> str:
        return str(self.t_env.get_config().get(RESULT_MODE, "TABLE")).strip().upper()

    def _check_result_mode(self) -> None:
        mode = self._result_mode()
        if mode not in ("TABLE", "CHANGELOG", "TABLEAU"):
            raise ValueError(f"Could not parse value '{mode.lower()}' for key '{RESULT_MODE}' "
                             "(expected one of TABLE, CHANGELOG, TABLEAU).")
        if not self.interactive and mode != "TABLEAU":
            raise ValueError(
                f"In non-interactive mode, it only supports to use TABLEAU as value of {RESULT_MODE} when execute "
                f"query. Please add 'SET {RESULT_MODE}=TABLEAU;' in the sql file.")
        if mode == "CHANGELOG" and not self.t_env.streaming:
            raise ValueError("Results of batch queries can only be served in table or tableau mode.")
        if mode != "TABLEAU":
            from changeflow.cli.terminal_view import check_terminal  # termios and curses: only for the views

            check_terminal(mode == "TABLE", out=self.out)

    def _show_query(self, result: TableResult, started: float) -> None:
        mode = self._result_mode()
        if mode != "TABLEAU":
            from changeflow.cli.terminal_view import show_result  # termios and curses: only for the views

            schema = result.get_resolved_schema()
            columns = list(zip(schema.get_field_names(), schema.get_field_data_types(), strict=True))
            max_rows = int(self.t_env.get_config().get(MAX_TABLE_ROWS, "1000000"))
            show_result(query_changes(result), columns, mode == "TABLE", max_rows=max_rows, out=self.out)
            self.info("Result retrieval cancelled.")  # Flink's words on leaving a result view
            return
        footer = None
        for line in sql_client_tableau(result):
            if footer is not None:
                self.write_line(footer)
            footer = line
        if footer is not None:
            took = time.monotonic() - started
            self.write_line(footer if footer == "Empty set" else f"{footer} ({took:.2f} seconds)")

    def _submitted(self, result: TableResult) -> None:
        job = result.get_job_client()
        if self.t_env.get_config().get("table.dml-sync", "false") in (True, "true", "TRUE"):
            # execute_sql waited for the job already (table.dml-sync), raising its error
            self.info("Complete execution of the SQL update statement.")
            return
        self.info("Submitting SQL update statement to the cluster...")
        self.info("SQL update statement has been successfully submitted to the cluster:")
        self.write_line(f"Job ID: {job.get_job_id() if job is not None else ''}")
        self.jobs.append(result)

    def _begin_statement_set(self) -> None:
        self._statement_set = self.t_env.create_statement_set()
        self.info("Execute statement succeeded.")

    def _end_statement_set(self) -> None:
        statements, self._statement_set = self._statement_set, None
        if statements is None:
            raise ValueError('No Statement Set to submit, "END;" command should be used after '
                             '"BEGIN STATEMENT SET;".')
        if not statements.has_statements():
            self.info("No statement in the statement set, skip submit.")
            return
        self._submitted(statements.execute())

    def wait_for_jobs(self) -> bool:
        """Wait for the INSERT jobs this client started (they run in this process); False if one failed."""
        ok = True
        while self.jobs:
            result = self.jobs.pop(0)
            try:
                result.wait()
            except Exception as e:
                self.error("Could not execute SQL statement.", self._reason(e))
                ok = False
        return ok
