"""What every ``record_flink_*.py`` script shares (no pyflink import at module level).

A recorder runs some named conformance cases under PyFlink 2.3 and writes one golden JSON
file per case. The parts every recorder needs are here, so a new recorder is its own
``record(case) -> golden`` function plus a call to :func:`record_each`:

- :func:`check_flink_version` warns when the installed PyFlink is not the goldens' version;
- :func:`new_env` is a fresh ``TableEnvironment`` of a mode with ``parallelism.default = 1``
  (so Flink's output order is its single-task order) and a case's table config;
- :func:`java_stdout` captures what an action writes to the JVM's ``System.out``
  (``print()`` and ``print_schema()`` write there, not to Python's stdout);
- :func:`dumps_golden` / :func:`write_json` give the goldens' diff-friendly JSON text;
- :func:`case_names` reads the command line's case names (``--list`` lists them);
- :func:`record_each` records the chosen cases, reporting a case that fails in Flink and
  going on, so one broken case does not hide the others; its exit status is 1 if any failed.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import traceback
from collections.abc import Callable, Mapping, Sequence
from typing import Any

FLINK_VERSION = "2.3.0"


def check_flink_version() -> None:
    try:
        from importlib.metadata import version
        v = version("apache-flink")
    except Exception:  # metadata missing: say so rather than guess
        v = None
    if v != FLINK_VERSION:
        print(f"warning: apache-flink {v} is installed; the goldens are for {FLINK_VERSION}",
              file=sys.stderr)


def new_env(mode: str, config: Mapping[str, str] | None = None):
    from pyflink.table import EnvironmentSettings, TableEnvironment
    settings = (EnvironmentSettings.in_batch_mode() if mode == "batch"
                else EnvironmentSettings.in_streaming_mode())
    t_env = TableEnvironment.create(settings)
    cfg = t_env.get_config()
    cfg.set("parallelism.default", "1")
    for key, value in (config or {}).items():
        cfg.set(key, value)
    return t_env


def java_stdout(action: Callable[[], Any]) -> str:
    """What ``action()`` writes to the JVM's ``System.out``, as text."""
    from pyflink.java_gateway import get_gateway
    jvm = get_gateway().jvm
    buf = jvm.java.io.ByteArrayOutputStream()
    stream = jvm.java.io.PrintStream(buf, True, "UTF-8")
    old = jvm.System.out
    jvm.System.setOut(stream)
    try:
        action()
        stream.flush()
    finally:
        jvm.System.setOut(old)
    return buf.toString("UTF-8")


def dumps_golden(golden: Mapping[str, Any]) -> str:
    """JSON text of a golden: one key per line, one change per line (diff-friendly)."""
    lines = []
    for key, value in golden.items():
        if key == "changes":
            if value:
                rows = ",\n".join("  " + json.dumps(ch, ensure_ascii=False) for ch in value)
                lines.append(f' "changes": [\n{rows}\n ]')
            else:
                lines.append(' "changes": []')
        else:
            lines.append(f" {json.dumps(key)}: {json.dumps(value, ensure_ascii=False)}")
    return "{\n" + ",\n".join(lines) + "\n}\n"


def write_json(path: str, golden: Mapping[str, Any]) -> None:
    text = dumps_golden(golden)
    assert json.loads(text) == golden, "a golden must survive its own JSON text"
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


def write_indented_json(path: str, golden: Mapping[str, Any], sort_keys: bool = False) -> None:
    """The other goldens' layout (``json.dump(..., indent=1)``), kept so re-recording them
    changes only what Flink changed."""
    with open(path, "w", encoding="utf-8") as f:
        json.dump(golden, f, indent=1, ensure_ascii=False, sort_keys=sort_keys)
        f.write("\n")


def write_records_golden(path: str, golden: Mapping[str, Any]) -> None:
    """The DataStream goldens' layout: the head's keys one per line, then ``records``, one
    record per line (readable diffs)."""
    head = {k: v for k, v in golden.items() if k != "records"}
    lines = [f" {json.dumps(k)}: {json.dumps(v)}," for k, v in head.items()]
    records = ",\n".join(f"  {json.dumps(r)}" for r in golden["records"])
    text = "{\n" + "\n".join(lines) + '\n "records": [\n' + records + ("\n" if records else "") + " ]\n}\n"
    assert json.loads(text) == golden, "a golden must survive its own JSON text"
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


def changes_summary(golden: Mapping[str, Any]) -> str:
    """A Table golden as a recorder prints it: mode, columns and types, one change per line."""
    lines = [f"({golden['mode']}): {golden['columns']} {golden['types']}"]
    return "\n".join(lines + [f"    {kind} {values}" for kind, values in golden["changes"]])


def case_names(argv: Sequence[str] | None, cases: Mapping[str, Any], description: str | None,
               line: Callable[[str], str] = str) -> list[str] | None:
    """The case names of the command line, all when none is given; ``None`` after ``--list``
    (which prints ``line(name)`` per case). An unknown name is an error naming it."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("cases", nargs="*", help="case names (default: all)")
    parser.add_argument("--list", action="store_true", help="list the cases and exit")
    args = parser.parse_args(argv)
    if args.list:
        for name in cases:
            print(line(name))
        return None
    unknown = [n for n in args.cases if n not in cases]
    if unknown:
        parser.error(f"unknown case(s): {', '.join(unknown)}")
    return list(args.cases or cases)


def record_each(cases: Mapping[str, Any], names: Sequence[str], golden_dir: str,
                record: Callable[[Any], Mapping[str, Any]],
                summary: Callable[[Mapping[str, Any]], str] = lambda golden: "",
                write: Callable[[str, Mapping[str, Any]], None] = write_json) -> int:
    """Record ``names`` of ``cases`` into ``golden_dir/<name>.json``; the exit status."""
    check_flink_version()
    os.makedirs(golden_dir, exist_ok=True)
    failed = []
    for name in names:
        try:
            golden = record(cases[name])
        except Exception as e:  # report, keep going
            failed.append(name)
            print(f"FAILED {name}: {type(e).__name__}: {str(e)[:2000]}", file=sys.stderr)
            traceback.print_exc(limit=3, file=sys.stderr)
            continue
        write(os.path.join(golden_dir, f"{name}.json"), golden)
        print(f"recorded {name}: {summary(golden)}", file=sys.stderr)
    if failed:
        print(f"{len(failed)} case(s) failed: {', '.join(failed)}", file=sys.stderr)
        return 1
    return 0
