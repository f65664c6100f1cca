"""Order stamps (changeflow.kernels.order): every layout is a (_seq, _sub) pair of int64s, and their order."""

from hypothesis import given
from hypothesis import strategies as st

from changeflow.kernels.order import (child_stamp, fire_stamp, key_end_stamp, source_stamp, stamp_seq, stamp_sub,
                                      timer_stamp)


def pair_stamp(seq, sub):
    """The stamp ``(seq, sub)``: a record frame's two stamp columns, read as kernels read them."""
    return (seq, sub)

_LONG = st.integers(-(2**62), 2**63 - 1)


@given(st.integers(-(2**63), 2**63 - 2), st.integers(-(2**63), 2**63 - 1))
def test_a_stamp_is_its_seq_and_sub_and_sorts_as_the_pair(seq, sub):
    stamp = pair_stamp(seq, sub)
    assert (stamp_seq(stamp), stamp_sub(stamp)) == (seq, sub)  # two int64 columns (once 16 bytes)
    assert stamp < pair_stamp(seq + 1, -(2**63))
    assert sub == 2**63 - 1 or stamp < pair_stamp(seq, sub + 1)


@given(st.integers(-(2**59), 2**59 - 1), st.booleans())
def test_a_timer_stamp_holds_its_time_after_every_source_position(time, event):
    seq = stamp_seq(timer_stamp(time, event))
    assert seq == 2**62 + (0 if event else 2) * 2**60 + time + 2**59 and stamp_sub(timer_stamp(time, event)) == 0


def test_firings_sort_between_event_and_processing_timers_and_a_key_end_after_its_record():
    assert timer_stamp(9, True) < fire_stamp(0) < fire_stamp(9) < timer_stamp(-9, False)
    last = child_stamp(source_stamp(3, 1), 2)
    assert child_stamp(last, 70000) < key_end_stamp(last, event=True) < key_end_stamp(last, event=False)
    assert key_end_stamp(last, event=False) < child_stamp(source_stamp(3, 1), 3) < source_stamp(4, 0)


@given(st.integers(0, 2**40), st.integers(0, 255), _LONG, st.booleans())
def test_timer_and_firing_outputs_come_after_every_record(position, source, time, event):
    record = child_stamp(source_stamp(position, source), 0)
    assert record < timer_stamp(time, event)
    assert record < fire_stamp(time)


@given(st.lists(st.tuples(st.integers(0, 1000), st.integers(0, 255),
                          st.lists(st.integers(0, 65534), max_size=2)), min_size=2, max_size=20))
def test_the_bridges_seq_and_sub_order_records_as_their_stamps_do_up_to_two_fan_outs(records):
    stamps = []
    for position, source, indices in records:
        stamp = source_stamp(position, source)
        for i in indices:
            stamp = child_stamp(stamp, i)
        stamps.append(stamp)
    by_stamp = sorted(range(len(stamps)), key=lambda i: stamps[i])
    by_pair = sorted(range(len(stamps)), key=lambda i: (stamp_seq(stamps[i]), stamp_sub(stamps[i])))
    assert [stamps[i] for i in by_stamp] == [stamps[i] for i in by_pair]
