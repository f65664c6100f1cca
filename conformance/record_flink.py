"""Record Flink's changelogs for the Table API conformance cases as golden JSON files.

Run with a Python that has apache-flink==2.3.0 installed, first on PATH (Flink's Python
workers are started with the ``python`` found on PATH), from the repository root::

    python conformance/record_flink.py                 # all cases
    python conformance/record_flink.py max_over_retracting_input daily_uv_minibatch_on
    python conformance/record_flink.py --list          # list the case names

Each case of ``conformance/table_cases.py`` runs under PyFlink (streaming:
``EnvironmentSettings.in_streaming_mode()``, batch: ``in_batch_mode()``) with
``parallelism.default = 1`` plus the case's table config, is collected with
``with table.execute().collect() as results:`` and written to
``conformance/goldens/table/<name>.json``::

    {"case": name, "mode": "streaming"|"batch", "config": {...}, "deterministic": bool,
     "description": str, "columns": [names], "types": [Flink's type string per column],
     "changes": [["+I", [values...]], ...], "flink_version": "2.3.0"}

``types`` are the logical types of the table's resolved schema as Flink prints them
(``BIGINT NOT NULL``, ``MULTISET<BIGINT> NOT NULL``, ...).  ``changes`` are in emission
order.  Values: ints, floats (Python repr, i.e. exact), strings, booleans, null; a
MULTISET (collected by PyFlink as a dict value -> count) is written as a list of
``[value, count]`` pairs sorted by value (null last); a DECIMAL as its string.

All cases run in one JVM (one py4j gateway).  Cases share a TableEnvironment when they
have the same mode and config (so config never leaks between cases).  A case that fails in
Flink is reported with its error and the run goes on; the exit status is 1 if any failed.

It also writes ``print_example*.txt``: the exact text of ``table.execute().print()`` for a
few cases (see ``PRINT_EXAMPLES``; ``print_example.txt`` is the daily-UV changelog in
streaming mode, ``print_example_batch.txt`` the same query in batch mode).
"""

from __future__ import annotations

import argparse
import decimal
import json
import os
import sys
import traceback
from types import SimpleNamespace

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
GOLDEN_DIR = os.path.join(HERE, "goldens", "table")

# Which case's print() output is captured, and into which file.
PRINT_EXAMPLES = {
    "daily_uv_minibatch_off": "print_example.txt",             # streaming changelog
    "batch_daily_uv": "print_example_batch.txt",               # batch: no op column
    "nulls_insert_only_aggregates": "print_example_nulls.txt",  # NULL, MULTISET
    "projection_arithmetic": "print_example_projection.txt",    # DOUBLE, BOOLEAN
    "global_aggregate_over_empty_input": "print_example_empty.txt",  # no rows
}

if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

from conformance.recording import (  # noqa: E402  (no pyflink import at module level)
    FLINK_VERSION, check_flink_version, java_stdout, new_env, write_json)
from conformance.table_cases import CASES  # noqa: E402  (no pyflink import there)


def _expressions_namespace():
    from pyflink.table import DataTypes
    from pyflink.table import expressions
    return SimpleNamespace(col=expressions.col, lit=expressions.lit, call=expressions.call,
                           DataTypes=DataTypes)


def _sort_key(v):
    # nulls last; then by type name so mixed types cannot raise; then by value
    return (v is None, type(v).__name__, v if v is not None else 0)


def to_json_value(v):
    """A collected PyFlink value as a JSON value (see the module docstring)."""
    if v is None or isinstance(v, (bool, int, str)):
        return v
    if isinstance(v, float):
        return v  # json writes repr(v): exact round trip
    if isinstance(v, decimal.Decimal):
        return str(v)
    if isinstance(v, dict):  # MULTISET -> sorted [value, count] pairs
        pairs = [[to_json_value(k), c] for k, c in v.items()]
        return sorted(pairs, key=lambda p: _sort_key(p[0]))
    if isinstance(v, (list, tuple)):
        return [to_json_value(x) for x in v]
    if hasattr(v, "isoformat"):
        return v.isoformat()
    if isinstance(v, (bytes, bytearray)):  # PyFlink collects bytearray, changeflow bytes
        return repr(bytes(v))
    raise TypeError(f"cannot encode collected value {v!r} of type {type(v).__name__}")


def resolved_schema(table):
    """The column names and Flink's type strings of a table's resolved schema."""
    resolved = table._j_table.getResolvedSchema()
    columns = [c.getName() for c in resolved.getColumns()]
    types = [c.getDataType().toString() for c in resolved.getColumns()]
    return columns, types


def run_case(t_env, E, c):
    table = c.build(t_env, E)
    columns, types = resolved_schema(table)
    changes = []
    with table.execute().collect() as results:
        for row in results:
            changes.append([str(row.get_row_kind()), [to_json_value(x) for x in row]])
    return {
        "case": c.name,
        "mode": c.mode,
        "config": dict(c.config),
        "deterministic": c.deterministic,
        "description": c.description,
        "columns": columns,
        "types": types,
        "changes": changes,
        "flink_version": FLINK_VERSION,
    }


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("cases", nargs="*", help="case names (default: all)")
    parser.add_argument("--list", action="store_true", help="list the cases and exit")
    parser.add_argument("--no-print-example", action="store_true",
                        help="do not (re)write the print() examples")
    args = parser.parse_args(argv)

    if args.list:
        for name, c in CASES.items():
            print(f"{name:48s} {c.mode:9s} {'' if c.deterministic else 'non-deterministic'}")
        return 0

    unknown = [n for n in args.cases if n not in CASES]
    if unknown:
        parser.error(f"unknown case(s): {', '.join(unknown)}")
    selected = [CASES[n] for n in (args.cases or CASES)]

    check_flink_version()
    os.makedirs(GOLDEN_DIR, exist_ok=True)
    E = _expressions_namespace()

    # one TableEnvironment per (mode, config), all in one JVM; streaming first
    envs = {}
    failed = []
    selected.sort(key=lambda c: (c.mode != "streaming", sorted(c.config.items())))
    for c in selected:
        env_key = (c.mode, tuple(sorted(c.config.items())))
        if env_key not in envs:
            envs[env_key] = new_env(c.mode, c.config)
        t_env = envs[env_key]
        try:
            golden = run_case(t_env, E, c)
        except Exception as e:  # report, keep going
            failed.append(c.name)
            print(f"FAILED {c.name}: {type(e).__name__}: {e}", file=sys.stderr)
            traceback.print_exc(file=sys.stderr)
            continue
        write_json(os.path.join(GOLDEN_DIR, f"{c.name}.json"), golden)
        print(f"recorded {c.name} ({c.mode}): {len(golden['changes'])} changes")
        for kind, values in golden["changes"]:
            print(f"    {kind} {json.dumps(values)}")

        if c.name in PRINT_EXAMPLES and not args.no_print_example:
            try:
                text = java_stdout(lambda c=c, t_env=t_env: c.build(t_env, E).execute().print())
            except Exception as e:
                failed.append(f"{c.name} (print)")
                print(f"FAILED print() of {c.name}: {e}", file=sys.stderr)
                continue
            path = os.path.join(GOLDEN_DIR, PRINT_EXAMPLES[c.name])
            with open(path, "w", encoding="utf-8") as f:
                f.write(text)
            print(f"wrote {os.path.relpath(path, ROOT)}")

    if failed:
        print(f"{len(failed)} case(s) failed in Flink: {', '.join(failed)}", file=sys.stderr)
        return 1
    print(f"recorded {len(selected)} case(s) into {os.path.relpath(GOLDEN_DIR, ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
