"""Record Flink's changelogs for the SQL conformance cases as golden JSON files.

Run with a Python that has apache-flink==2.3.0 installed, first on PATH (Flink's Python
workers are started with the ``python`` found on PATH), from the repository root::

    python conformance/record_flink_sql.py                  # all cases
    python conformance/record_flink_sql.py having top2_with_row_number
    python conformance/record_flink_sql.py --repeat 3       # also check determinism
    python conformance/record_flink_sql.py --list

Each case of ``conformance/sql_cases.py`` runs under PyFlink in a TableEnvironment of its
own (so views, tables and SET statements never leak between cases) with
``parallelism.default = 1`` plus the case's config, is collected with
``with result.collect() as rows:`` and written to ``conformance/goldens/sql/<name>.json``.
The golden holds what ``record_flink.py`` writes for the Table API cases (``case``,
``mode``, ``config``, ``deterministic``, ``description``, ``columns``, ``types``,
``changes``, ``flink_version``; same value encoding) and in addition:

* ``compare`` and ``why``: how changeflow's tests compare the changelog, and why;
* ``statements``: every ``sql_query`` / ``execute_sql`` text the program ran, in order
  (the case's temporary directory written as ``{tmp}``);
* for ``compare == "error"`` cases, instead of columns/types/changes: ``error`` =
  ``{"stage", "class", "message", "root_class", "root_message"}``: where Flink failed
  (``plan``: building the table; ``execute``: at ``execute()``; ``collect``: while the
  job ran), the Java exception class and the first line of its message, and the same
  for the innermost cause.

``--repeat N`` runs every case N times and fails if a case compared as ``changelog``
changes its order, or any case changes its materialized result, between runs.
A case that fails in Flink (other than an expected error) is reported, the run goes on,
and the exit status is 1.  The Table API goldens are not touched.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import sys
import tempfile
from collections import Counter
from types import SimpleNamespace

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
GOLDEN_DIR = os.path.join(HERE, "goldens", "sql")

if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

from conformance.record_flink import to_json_value  # noqa: E402  (no pyflink import at module level)
from conformance.recording import FLINK_VERSION, new_env, record_each  # noqa: E402
from conformance.sql_cases import CASES  # noqa: E402


class RecordingEnv:
    """A TableEnvironment that remembers the SQL texts run through it (for the golden)."""

    def __init__(self, t_env, tmp):
        self._t_env = t_env
        self._tmp = tmp
        self.statements = []

    def _note(self, sql):
        self.statements.append(sql.replace(self._tmp, "{tmp}"))

    def sql_query(self, sql):
        self._note(sql)
        return self._t_env.sql_query(sql)

    def execute_sql(self, sql):
        self._note(sql)
        return self._t_env.execute_sql(sql)

    def __getattr__(self, name):
        return getattr(self._t_env, name)


def _first_line(text):
    text = (text or "").strip()
    return text.splitlines()[0][:400] if text else ""


def _java_error(e, tmp):
    """(class, message, root class, root message) of a PyFlink/py4j exception."""
    j = getattr(e, "java_exception", None)
    if j is None:
        # PyFlink converts some Java exceptions into pyflink.util.exceptions classes whose
        # text is the Java stack trace: "<class>: <message>", ..., "Caused by: <class>: ..."
        lines = str(e).replace(tmp, "{tmp}").splitlines()
        causes = [ln.strip()[len("Caused by: "):] for ln in lines
                  if ln.strip().startswith("Caused by: ")]
        top = lines[0] if lines else type(e).__name__
        root = causes[-1] if causes else top

        def split(line):
            cls, _, message = line.partition(": ")
            return (cls, message[:400]) if "." in cls and " " not in cls else \
                (type(e).__name__, line[:400])

        return (*split(top), *split(root))
    root = j
    while root.getCause() is not None and root.getCause() is not root:
        root = root.getCause()

    def msg(x):
        return _first_line((x.getMessage() or "").replace(tmp, "{tmp}"))

    return j.getClass().getName(), msg(j), root.getClass().getName(), msg(root)


def _schema(result):
    j_schema = (result._j_table.getResolvedSchema() if hasattr(result, "_j_table")
                else result._j_table_result.getResolvedSchema())
    columns = [c.getName() for c in j_schema.getColumns()]
    types = [c.getDataType().toString() for c in j_schema.getColumns()]
    return columns, types


def run_case(c):
    """Run case ``c`` once in a fresh TableEnvironment; return its golden dict."""
    from pyflink.table import DataTypes

    tmp = tempfile.mkdtemp(prefix=f"sqlcase_{c.name}_")
    golden = {"case": c.name, "mode": c.mode, "config": dict(c.config),
              "deterministic": c.deterministic, "compare": c.compare, "why": c.why,
              "description": c.description}
    stage = "plan"
    try:
        t_env = RecordingEnv(new_env(c.mode, c.config), tmp)
        E = SimpleNamespace(DataTypes=DataTypes, tmp=tmp)
        try:
            result = c.build(t_env, E)
            columns, types = _schema(result)
            stage = "execute"
            if hasattr(result, "execute"):  # a Table; a TableResult is already running
                result = result.execute()
            stage = "collect"
            changes = []
            with result.collect() as rows:
                for row in rows:
                    changes.append([str(row.get_row_kind()), [to_json_value(x) for x in row]])
        except Exception as e:
            if c.compare != "error":
                raise
            cls, message, root_cls, root_message = _java_error(e, tmp)
            golden.update(statements=t_env.statements,
                          error={"stage": stage, "class": cls, "message": message,
                                 "root_class": root_cls, "root_message": root_message},
                          flink_version=FLINK_VERSION)
            return golden
        if c.compare == "error":
            raise AssertionError(f"{c.name}: expected Flink to reject the query, it ran")
        golden.update(statements=t_env.statements, columns=columns, types=types,
                      changes=changes, flink_version=FLINK_VERSION)
        return golden
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _materialized(changes):
    table = Counter()
    for kind, values in changes:
        table[json.dumps(values)] += -1 if kind in ("-U", "-D") else 1
    return +table


def _same_run(c, first, again):
    """None if two runs agree as far as the case's comparison needs, else why not."""
    if c.compare == "error":
        # Calcite's messages name plan nodes by ids (rel#348) that grow with every planning in the JVM.
        same = {k: re.sub(r"#\d+", "#", str(v)) for k, v in first["error"].items()} == \
            {k: re.sub(r"#\d+", "#", str(v)) for k, v in again["error"].items()}
        return None if same else "error differs"
    if _materialized(first["changes"]) != _materialized(again["changes"]):
        return "materialized result differs"
    if c.compare == "changelog" and first["changes"] != again["changes"]:
        return "changelog order differs"
    if c.compare == "multiset" and Counter(map(json.dumps, first["changes"])) != \
            Counter(map(json.dumps, again["changes"])):
        return "multiset of changes differs"
    return None


def _recorded_twice(c, repeat: int) -> dict:
    """The case's golden, after checking that ``repeat`` runs of it agree."""
    golden = run_case(c)
    for _ in range(repeat - 1):
        problem = _same_run(c, golden, run_case(c))
        if problem:
            raise AssertionError(f"runs disagree: {problem}")
    return golden


def _summary(golden: dict) -> str:
    if "error" in golden:
        err = golden["error"]
        return (f"error at {err['stage']}: {err['class']}: {err['message']} | "
                f"{err['root_class']}: {err['root_message']}")
    lines = [f"({golden['mode']}, {golden['compare']}): {len(golden['changes'])} changes"
             f"  {list(zip(golden['columns'], golden['types'], strict=True))}"]
    return "\n".join(lines + [f"    {kind} {json.dumps(values, ensure_ascii=False)}"
                              for kind, values in golden["changes"]])


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("cases", nargs="*", help="case names (default: all)")
    parser.add_argument("--list", action="store_true", help="list the cases and exit")
    parser.add_argument("--repeat", type=int, default=1,
                        help="run each case N times and check the runs agree")
    args = parser.parse_args(argv)

    if args.list:
        for name, c in CASES.items():
            print(f"{name:56s} {c.mode:9s} {c.compare}")
        return 0
    unknown = [n for n in args.cases if n not in CASES]
    if unknown:
        parser.error(f"unknown case(s): {', '.join(unknown)}")
    return record_each(CASES, list(args.cases or CASES), GOLDEN_DIR,
                       lambda c: _recorded_twice(c, args.repeat), summary=_summary)


if __name__ == "__main__":
    sys.exit(main())
