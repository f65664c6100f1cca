"""Window Top-N across micro-batches: the golden of ``window_topn_tvf`` with three source rows per
micro-batch, so the late rows (a at 5 s, whose window [0,10) fired, and a at 31 s, whose window is
still open) meet the watermarks of earlier micro-batches held in the operator's state, and the
watermarks inside a micro-batch reach the kernel in one call (``process_with_watermarks``)."""

from __future__ import annotations

import dataclasses

import pytest

from conformance.sql_cases import CASES
from tests.conformance.test_sql_conformance import _run, load_golden, normalize


@pytest.mark.spark
def test_window_top_n_is_flinks_whatever_the_micro_batches(spark, tmp_path):
    name = "window_topn_tvf"
    case = CASES[name]
    case = dataclasses.replace(case, config={**case.config, "changeflow.source.rows-per-batch": "3"})
    _, ours = _run(case, spark, tmp_path, [None])
    assert ours == [(kind, normalize(values)) for kind, values in load_golden(name)["changes"]]
