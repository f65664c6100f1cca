"""Record Flink 2.3's sink upsert materializer behaviour (``INSERT ... ON CONFLICT``) as golden files.

Run with a Python that has apache-flink==2.3.0, first on PATH, from the repository root::

    python conformance/record_flink_upsert.py                 # all cases
    python conformance/record_flink_upsert.py nothing_with_watermark missing_on_conflict
    python conformance/record_flink_upsert.py --list

For every case of ``conformance/upsert_cases.py`` (a fresh TableEnvironment with
``parallelism.default = 1`` and the case's config) it writes
``conformance/goldens/upsert/<name>.json`` holding Flink's planning verdict
(``plan``: the ``Sink(...)`` line of the optimized physical plan and whether a
``SinkMaterializer`` runs, or the error), the query's own changelog (``input``, what
the materializer receives) and what the print sink printed (``output``) or the job's
error. Values are JSON (strings, integers, null) parsed with the sink's column types.

The print sink writes to the JVM's standard output, which PyFlink's gateway inherits
from this process: the recorder points file descriptor 1 at a capture file before
the JVM starts and reads each job's lines from it (its own messages go to stderr).
"""

from __future__ import annotations

import csv
import os
import re
import shutil
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
GOLDEN_DIR = os.path.join(HERE, "goldens", "upsert")

if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

from conformance.record_flink import to_json_value  # noqa: E402  (no pyflink import at module level)
from conformance.recording import FLINK_VERSION, case_names, new_env, record_each  # noqa: E402
from conformance.record_flink_sql import _java_error  # noqa: E402
from conformance.upsert_cases import CASES, DATA, SINK_KEYS, SINK_TYPES, TABLES  # noqa: E402

_PRINTED = re.compile(r"^(?:\S+> )?([+-][IUD])\[(.*)\]$")


class StdoutCapture:
    """The process's file descriptor 1 (and so the JVM's System.out) redirected to a file."""

    def __init__(self) -> None:
        self.path = tempfile.mktemp(prefix="flink_stdout_", suffix=".txt")
        self.file = open(self.path, "w+b")  # noqa: SIM115 - fd 1 for the rest of the process's life
        os.dup2(self.file.fileno(), 1)
        sys.stdout = sys.stderr  # Python's own prints stay visible

    def position(self) -> int:
        return os.path.getsize(self.path)

    def lines_since(self, offset: int) -> list[str]:
        with open(self.path, "rb") as f:
            f.seek(offset)
            return f.read().decode("utf-8", "replace").splitlines()


def _write_data(tmp: str) -> None:
    for name, rows in DATA.items():
        with open(os.path.join(tmp, name), "w", newline="") as f:
            csv.writer(f).writerows(rows)


def _parse_value(text: str, type_name: str):
    if text == "null":
        return None
    if type_name in ("INT", "BIGINT"):
        return int(text)
    return text


def _printed_changes(lines: list[str], types) -> list:
    changes = []
    for line in lines:
        m = _PRINTED.match(line.strip())
        if m:
            fields = m.group(2).split(", ") if m.group(2) else []
            changes.append([m.group(1), [_parse_value(v, t) for v, t in zip(fields, types, strict=True)]])
    return changes


def _plan(t_env, c) -> dict:
    """Flink's Sink line and whether its execution plan runs a SinkMaterializer."""
    from pyflink.table.explain_detail import ExplainDetail

    text = t_env.explain_sql(c.insert, ExplainDetail.CHANGELOG_MODE)
    physical = text.split("== Optimized Physical Plan ==")[1].strip().splitlines()
    json_plan = t_env.explain_sql(c.insert, ExplainDetail.JSON_EXECUTION_PLAN)
    return {"sink": physical[0], "materializer": "SinkMaterializer(" in json_plan}


def run_case(c, capture: StdoutCapture) -> dict:
    tmp = tempfile.mkdtemp(prefix=f"upsert_{c.name}_")
    golden = {"case": c.name, "mode": c.mode, "config": dict(c.config), "compare": c.compare, "why": c.why,
              "description": c.description, "statements": [], "sink": c.sink,
              "primary_key": list(SINK_KEYS[c.sink]), "types": list(SINK_TYPES[c.sink])}
    try:
        _write_data(tmp)
        t_env = new_env(c.mode, c.config)
        for name in c.tables:
            ddl = TABLES[name].replace("{tmp}", tmp)
            t_env.execute_sql(ddl)
            golden["statements"].append(TABLES[name])
        golden["statements"].append(c.insert)
        try:
            golden["plan"] = _plan(t_env, c)
        except Exception as e:  # rejected at planning
            cls, message, _, _ = _java_error(e, tmp)
            golden["plan"] = {"error": {"class": cls, "message": message}}
            return golden
        if c.plan_only:
            golden["flink_version"] = FLINK_VERSION
            return golden
        if c.mode == "streaming":
            with t_env.sql_query(c.select).execute().collect() as rows:
                golden["input"] = [[str(r.get_row_kind()), [to_json_value(v) for v in r]] for r in rows]
        offset = capture.position()
        try:
            t_env.execute_sql(c.insert).wait()
        except Exception as e:
            cls, message, root_cls, root_message = _java_error(e, tmp)
            golden["error"] = {"class": cls, "message": message, "root_class": root_cls,
                               "root_message": root_message}
        golden["output"] = _printed_changes(capture.lines_since(offset), SINK_TYPES[c.sink])
        golden["flink_version"] = FLINK_VERSION
        return golden
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _summary(golden: dict) -> str:
    plan = golden["plan"]
    lines = [f"rejected: {plan['error']['message']}" if "error" in plan else plan["sink"]]
    lines += [f"    {kind} {values}" for kind, values in golden.get("output", [])]
    if "error" in golden:
        lines.append(f"    job failed: {golden['error']['root_message']}")
    return "\n".join(lines)


def main(argv=None) -> int:
    names = case_names(argv, CASES, __doc__.split("\n\n")[0],
                       line=lambda n: f"{n:40s} {CASES[n].mode:9s} {CASES[n].compare:12s} {CASES[n].insert}")
    if names is None:
        return 0
    capture = StdoutCapture()  # before the JVM starts, so it inherits the redirected stdout
    return record_each(CASES, names, GOLDEN_DIR, lambda c: run_case(c, capture), summary=_summary)


if __name__ == "__main__":
    sys.exit(main())
