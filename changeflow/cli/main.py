"""``changeflow``: the command line. ``changeflow sql`` is Flink's SQL client on changeflow.

::

    changeflow sql -f job.sql [-i init.sql] [-D key=value ...] [--verbose]
    changeflow sql                          # the interactive shell

``-i`` runs a script of ``SET``/DDL statements first (Flink's init file), ``-f``
runs a script and exits (at its first failing statement, with exit code 1, where
Flink's client exits with 0), ``-D`` sets a configuration key as ``SET`` does.
Without ``-f`` the shell reads statements from the terminal. The mode is
Flink's ``execution.runtime-mode`` (streaming unless set).
"""

from __future__ import annotations

import argparse
import sys

from changeflow.cli.client import Quit, SqlClient
from changeflow.cli.script import statements
from changeflow.cli.shell import run_shell


def parser() -> argparse.ArgumentParser:
    main = argparse.ArgumentParser(prog="changeflow", description="changeflow: Flink-style changelog stream "
                                   "processing on Apache Spark.")
    commands = main.add_subparsers(dest="command", required=True)
    sql = commands.add_parser("sql", help="run SQL: a script (-f) or an interactive shell, as Flink's SQL client",
                              description="Flink's SQL client on changeflow.")
    sql.add_argument("-f", "--file", help="a SQL script to run; the client exits after it")
    sql.add_argument("-i", "--init", help="a SQL script (SET and DDL) to run first")
    sql.add_argument("-D", dest="options", action="append", default=[], metavar="key=value",
                     help="a configuration key, as SET 'key' = 'value' (repeatable)")
    sql.add_argument("--verbose", action="store_true", help="print a failing statement's whole traceback")
    return main


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    from changeflow.table import EnvironmentSettings, TableEnvironment

    settings = EnvironmentSettings.in_streaming_mode()
    t_env = TableEnvironment.create(settings)
    client = SqlClient(t_env, interactive=args.file is None, verbose=args.verbose)
    for option in args.options:
        key, sep, value = option.partition("=")
        if not sep:
            print(f"changeflow sql: -D takes key=value, got {option!r}", file=sys.stderr)
            return 2
        if not client.run(f"SET '{key.strip()}' = '{value.strip()}'"):
            return 1
    if args.init is not None:
        if not run_file(client, args.init, echo=False):
            return 1
        print(f"Successfully initialized from sql script: {args.init}")
    if args.file is None:
        run_shell(client)
        return 0 if client.wait_for_jobs() else 1
    ok = run_file(client, args.file)
    return 0 if client.wait_for_jobs() and ok else 1


def run_file(client: SqlClient, path: str, echo: bool = True) -> bool:
    """Run the statements of the script at ``path`` until one fails; whether all succeeded."""
    try:
        with open(path, encoding="utf-8") as f:
            script = f.read()
    except OSError as e:
        client.error(f"Could not read the SQL script {path!r}.", f"{type(e).__name__}: {e.strerror}")
        return False
    if echo:
        client.info("Executing SQL from file.")
    try:
        for statement in statements(script):
            if echo:
                client.write_line(f"Flink SQL> {statement.source}")
            if not client.run(statement):
                return False
    except Quit:
        pass
    return True


if __name__ == "__main__":
    sys.exit(main())
