"""The interactive SQL shell: statements typed over several lines, run when a ``;`` ends them.

Lines are read until one ends a statement (a semicolon outside strings and
comments, :func:`changeflow.cli.script.is_complete`); then each statement in
them runs. Ctrl-C while typing drops the statement being typed; while a query
runs, it ends that query (its rows so far stay on the screen) and the shell
goes on. Ctrl-D or ``QUIT;`` ends the shell. History is kept in
``~/.changeflow-sql-history`` when the terminal has readline.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable

from changeflow.cli.client import Quit, SqlClient
from changeflow.cli.script import is_complete, statements

PROMPT = "Flink SQL> "
CONTINUATION = "> "
WELCOME = "changeflow SQL client: Flink SQL on Spark. Enter 'HELP;' to list the commands, 'QUIT;' to exit.\n"
HISTORY = os.path.join(os.path.expanduser("~"), ".changeflow-sql-history")


def run_shell(client: SqlClient, read: Callable[[str], str] = input) -> None:
    """Read, run and print statements until ``QUIT;`` or the end of input."""
    history = _load_history() if read is input else None
    client.write_line(WELCOME)
    lines: list[str] = []
    try:
        while True:
            try:
                line = read(CONTINUATION if lines else PROMPT)
            except KeyboardInterrupt:
                lines = []  # Ctrl-C while typing: the statement is dropped, the shell goes on
                client.write_line()
                continue
            except EOFError:
                client.write_line()
                break
            lines.append(line)
            text = "\n".join(lines)
            if not is_complete(text):
                continue
            lines = []
            for statement in statements(text):
                client.run(statement)
    except Quit:
        pass
    finally:
        if history is not None:
            history.write_history_file(HISTORY)
    client.info("Exiting changeflow SQL client...")


def _load_history():
    try:
        import readline
    except ImportError:  # not on every platform: the shell works without history
        return None
    with contextlib.suppress(OSError):  # no history yet
        readline.read_history_file(HISTORY)
    return readline
