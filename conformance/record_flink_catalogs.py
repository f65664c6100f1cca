"""Record PyFlink 2.3's answers to the catalog cases (``conformance/catalog_cases.py``).

Run from the repository root with a Python that has apache-flink==2.3.0, first on PATH::

    python conformance/record_flink_catalogs.py            # all cases
    python conformance/record_flink_catalogs.py databases

Writes ``conformance/goldens/catalogs/<case>.json``: ``{"case", "flink_version", "steps":
[{"step": the statement or API call, "rows": [[values...]] | null, "value": an API call's
result | null, "errors": [the message of the error and of each cause, outermost first] | null}]}``.
"""

from __future__ import annotations

import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
GOLDEN_DIR = os.path.join(HERE, "goldens", "catalogs")

if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

from conformance.catalog_cases import CATALOG_CASES  # noqa: E402
from conformance.recording import FLINK_VERSION, case_names, new_env, record_each, write_indented_json  # noqa: E402


def _messages(error) -> list[str]:
    """The messages of a Java exception and its causes (outermost first); a Python error's text."""
    java = getattr(error, "java_exception", None)
    if java is None:
        return _trace_messages(str(error))
    messages = []
    while java is not None:
        messages.append(str(java.getMessage()))
        java = java.getCause()
    return messages


def _trace_messages(trace: str) -> list[str]:
    """The messages of a Java stack trace's text (PyFlink's converted exceptions keep only the text)."""
    messages, current = [], None
    for line in trace.splitlines():
        if line.startswith("\tat ") or line.startswith("\t... "):
            if current is not None:
                messages.append("\n".join(current))
                current = None
            continue
        head = line[len("Caused by: "):] if line.startswith("Caused by: ") else None
        if head is not None or not messages and current is None:
            text = head if head is not None else line
            current = [re.sub(r"^[\w.$]+(Exception|Error)(: )?", "", text, count=1)]
        elif current is not None:
            current.append(line)
    if current is not None:
        messages.append("\n".join(current))
    return messages


def run_step(t_env, step) -> dict:
    print("step", step, flush=True)
    record = {"step": step if isinstance(step, str) else list(step), "rows": None, "value": None, "errors": None}
    try:
        if isinstance(step, str):
            with t_env.execute_sql(step).collect() as results:
                record["rows"] = [[None if v is None else str(v) for v in row] for row in results]
        elif step[0] == "view":
            t_env.create_temporary_view(step[1], t_env.sql_query(step[2]))
        else:
            value = getattr(t_env, step[1])(*step[2:])
            record["value"] = list(value) if isinstance(value, (list, tuple)) else value
    except Exception as error:  # noqa: BLE001 - Flink's error is what we record
        record["errors"] = _messages(error)
    return record


def record(name: str) -> dict:
    t_env = new_env("streaming")
    steps = [run_step(t_env, step) for step in CATALOG_CASES[name]]
    return {"case": name, "flink_version": FLINK_VERSION, "steps": steps}


def main(argv: list[str] | None = None) -> int:
    names = case_names(argv, CATALOG_CASES, __doc__.split("\n\n")[0])
    if names is None:
        return 0
    # a case is its list of steps: record it by name
    return record_each({name: name for name in names}, names, GOLDEN_DIR, record,
                       summary=lambda g: f"{len(g['steps'])} steps", write=write_indented_json)


if __name__ == "__main__":
    sys.exit(main())
