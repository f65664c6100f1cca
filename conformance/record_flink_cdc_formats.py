"""Record Flink 2.3's output for the changelog-format cases (``conformance/cdc_format_cases.py``).

Run from the repository root with a Python that has apache-flink==2.3.0 first on PATH
(PyFlink's ``lib`` folder ships ``flink-json``, which holds the three formats)::

    python conformance/record_flink_cdc_formats.py              # all cases
    python conformance/record_flink_cdc_formats.py canal_changelog

Each case is run by the SQL recorder's ``run_case`` (a fresh TableEnvironment,
``parallelism.default = 1``) and written to ``conformance/goldens/cdc_formats/<case>.json``
in the SQL goldens' format. A streaming case that runs also records ``explain``: the
``== Optimized Physical Plan ==`` section of its query's ``explain(CHANGELOG_MODE)`` (the
source's ``changelogMode``). A case that fails in Flink other than as expected is reported, the
run goes on, and the exit status is 1.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
import traceback
from types import SimpleNamespace

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
GOLDEN_DIR = os.path.join(HERE, "goldens", "cdc_formats")

if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

from conformance.cdc_format_cases import CDC_CASES  # noqa: E402  (no pyflink import there)
from conformance.record_flink import _check_flink_version, _new_env, _write_json  # noqa: E402
from conformance.record_flink_sql import RecordingEnv, run_case  # noqa: E402


def _explain(c) -> str:
    """The optimized physical plan of the case's query, with changelog modes."""
    tmp = tempfile.mkdtemp(prefix=f"cdccase_{c.name}_")
    try:
        t_env = RecordingEnv(_new_env(c.mode, c.config), tmp)
        table = c.build(t_env, SimpleNamespace(tmp=tmp))
        from pyflink.table.explain_detail import ExplainDetail

        text = table.explain(ExplainDetail.CHANGELOG_MODE)
        physical = text.split("== Optimized Physical Plan ==", 1)[1].split("== Optimized Execution Plan ==")[0]
        return physical.strip().replace(tmp, "{tmp}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def main(argv: list[str]) -> int:
    unknown = [n for n in argv if n not in CDC_CASES]
    if unknown:
        print(f"unknown case(s): {', '.join(unknown)}", file=sys.stderr)
        return 2
    _check_flink_version()
    os.makedirs(GOLDEN_DIR, exist_ok=True)
    failed = []
    for name in argv or list(CDC_CASES):
        c = CDC_CASES[name]
        try:
            golden = run_case(c)
            if "error" not in golden and c.mode == "streaming":
                golden["explain"] = _explain(c)
        except Exception as e:  # report, keep going
            failed.append(name)
            print(f"FAILED {name}: {type(e).__name__}: {str(e)[:2000]}", file=sys.stderr)
            traceback.print_exc(limit=3, file=sys.stderr)
            continue
        _write_json(os.path.join(GOLDEN_DIR, f"{name}.json"), golden)
        if "error" in golden:
            print(f"recorded {name}: error {golden['error']}")
        else:
            print(f"recorded {name}: {golden['changes']}")
    if failed:
        print(f"{len(failed)} case(s) failed: {', '.join(failed)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
