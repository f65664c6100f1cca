"""CURRENT_WATERMARK's stamping kernel: each row carries the watermark its operator saw before it."""

from __future__ import annotations

from changeflow.common import Row, RowKind
from changeflow.kernels.current_watermark import CurrentWatermarkStamp
from changeflow.testing import KernelHarness


def test_rows_carry_the_watermark_before_them_null_before_the_first_and_kinds_pass_through():
    h = KernelHarness(CurrentWatermarkStamp(["k", "v"]), ["k", "v"], restart_every_batch=True)
    assert [tuple(r) for r in h.process([Row("a", 1)])] == [("a", 1, None)]
    h.watermark(1_000)
    retraction = Row("a", 1)
    retraction.set_row_kind(RowKind.UPDATE_BEFORE)
    out = h.process([retraction, Row("b", 2)])
    assert [(r.get_row_kind(), tuple(r)) for r in out] == [
        (RowKind.UPDATE_BEFORE, ("a", 1, 1_000)), (RowKind.INSERT, ("b", 2, 1_000))]
    assert h.watermark(1_500) == []   # nothing waits for a watermark
    assert [tuple(r) for r in h.process([Row("c", 3)])] == [("c", 3, 1_500)]
