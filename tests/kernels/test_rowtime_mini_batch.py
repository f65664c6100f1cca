"""The row-time MiniBatchAssigner's watermark filter (changeflow.kernels.rowtime_mini_batch)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from changeflow.kernels.contract import MAX_WATERMARK
from changeflow.kernels.rowtime_mini_batch import passes


def _filtered(watermarks, interval, last=None):
    """The watermarks that pass, in order, and the last one passed (what a host keeps)."""
    kept = []
    for w in watermarks:
        if (last is None or w > last) and passes(last, w, interval):
            kept.append(w)
            last = w
    return kept, last


def test_the_seeds_example_and_flinks_javadoc_example():
    # minibatch.txt: [1, 3, 7, 8, 14] with a 5 s interval forwards only 7 and 14.
    assert _filtered([1, 3, 7, 8, 14], 5)[0] == [7, 14]
    # RowTimeMiniBatchAssginerOperator's javadoc: 0..21 with the interval 5 forwards 4, 9, 14, 19.
    assert _filtered(range(22), 5)[0] == [4, 9, 14, 19]


def test_the_end_of_input_always_passes():
    assert passes(14, MAX_WATERMARK, 5)
    assert not passes(14, 15, 5)


@given(st.lists(st.integers(0, 10_000), max_size=40), st.integers(1, 500), st.integers(0, 40))
def test_split_across_micro_batches_the_same_watermarks_pass(watermarks, interval, cut):
    """The filter keeps only the last watermark passed: resuming from it (a new micro-batch) changes nothing."""
    watermarks = sorted(set(watermarks))
    whole, _ = _filtered(watermarks, interval)
    first, last = _filtered(watermarks[:cut], interval)
    second, _ = _filtered(watermarks[cut:], interval, last)
    assert first + second == whole
    # A watermark passes exactly when an interval end (k * interval - 1) lies after the last one
    # passed (after 0 at first, where Flink's operator starts) and at or before it.
    last = 0
    for w in watermarks:
        ends_crossed = (w + 1) // interval > (last + 1) // interval
        assert (w in whole) == ends_crossed
        last = w if ends_crossed else last
