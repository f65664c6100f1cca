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
from types import SimpleNamespace

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
GOLDEN_DIR = os.path.join(HERE, "goldens", "cdc_formats")

if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

from conformance.cdc_format_cases import CDC_CASES  # noqa: E402  (no pyflink import there)
from conformance.recording import case_names, new_env, record_each  # noqa: E402
from conformance.record_flink_sql import RecordingEnv, run_case  # noqa: E402


def _explain(c) -> str:
    """The optimized physical plan of the case's query, with changelog modes."""
    tmp = tempfile.mkdtemp(prefix=f"cdccase_{c.name}_")
    try:
        t_env = RecordingEnv(new_env(c.mode, c.config), tmp)
        table = c.build(t_env, SimpleNamespace(tmp=tmp))
        from pyflink.table.explain_detail import ExplainDetail

        text = table.explain(ExplainDetail.CHANGELOG_MODE)
        physical = text.split("== Optimized Physical Plan ==", 1)[1].split("== Optimized Execution Plan ==")[0]
        return physical.strip().replace(tmp, "{tmp}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _record(c) -> dict:
    golden = run_case(c)
    if "error" not in golden and c.mode == "streaming":
        golden["explain"] = _explain(c)
    return golden


def main(argv: list[str] | None = None) -> int:
    names = case_names(argv, CDC_CASES, __doc__.split("\n\n")[0])
    if names is None:
        return 0
    return record_each(CDC_CASES, names, GOLDEN_DIR, _record,
                       summary=lambda g: f"error {g['error']}" if "error" in g else str(g["changes"]))


if __name__ == "__main__":
    sys.exit(main())
