"""Segmented scans: exact against a plain Python loop, including long segments and floats."""

import numpy as np
from hypothesis import given, settings, strategies as st

from changeflow.kernels.aggregate.segments import Segments, group_order


def python_scan(op, x, starts, base):
    out, bounds = [], list(starts) + [len(x)]
    for seg, (lo, hi) in enumerate(zip(bounds[:-1], bounds[1:], strict=True)):
        acc = base[seg]
        for v in x[lo:hi]:
            acc = op(acc, v)
            out.append(acc)
    return out


segment_lengths = st.lists(st.integers(1, 40), min_size=1, max_size=12)


@settings(max_examples=60, deadline=None)
@given(lengths=segment_lengths, data=st.data())
def test_float_cumsum_adds_left_to_right_from_the_base(lengths, data):
    n = sum(lengths)
    x = np.array(data.draw(st.lists(st.floats(-1e12, 1e12), min_size=n, max_size=n)))
    base = np.array(data.draw(st.lists(st.floats(-1e12, 1e12), min_size=len(lengths), max_size=len(lengths))))
    starts = np.cumsum([0] + lengths[:-1])
    got = Segments(starts, n).cumsum(x, base=base)
    assert got.tolist() == python_scan(lambda a, b: a + b, x.tolist(), starts, base.tolist())


@settings(max_examples=60, deadline=None)
@given(lengths=segment_lengths, data=st.data())
def test_int_cumsum_and_min_scan(lengths, data):
    n = sum(lengths)
    x = np.array(data.draw(st.lists(st.integers(-5, 5), min_size=n, max_size=n)), dtype=np.int64)
    base = np.array(data.draw(st.lists(st.integers(-5, 5), min_size=len(lengths), max_size=len(lengths))))
    starts = np.cumsum([0] + lengths[:-1])
    segments = Segments(starts, n)
    assert segments.cumsum(x, base=base).tolist() == python_scan(lambda a, b: a + b, x.tolist(), starts, base.tolist())
    assert segments.scan(np.minimum, x, base=base).tolist() == python_scan(min, x.tolist(), starts, base.tolist())


def test_int_cumsum_wraps_like_java_long():
    x = np.array([2**62, 2**62, 2**62, -(2**62)], dtype=np.int64)
    got = Segments(np.array([0]), 4).cumsum(x, base=np.array([0]))
    assert got.tolist() == [2**62, -(2**63), -(2**62), -(2**63)]


def test_a_long_segment_among_short_ones():
    lengths = [1, 1000, 3]
    x = np.arange(sum(lengths), dtype=np.float64) * 0.1
    starts = np.cumsum([0] + lengths[:-1])
    got = Segments(starts, len(x)).cumsum(x, base=np.zeros(3))
    assert got.tolist() == python_scan(lambda a, b: a + b, x.tolist(), starts, [0.0] * 3)


def test_group_order_is_stable():
    codes = np.array([2, 0, 2, 1, 0, 2])
    assert group_order(codes, 3).tolist() == [1, 4, 3, 0, 2, 5]
