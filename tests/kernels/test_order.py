"""Order stamps (changeflow.kernels.order): the layouts the kernels wrote by hand before, and their order."""

from hypothesis import given
from hypothesis import strategies as st

from changeflow.kernels.order import (child_stamp, fire_stamp, key_end_stamp, source_stamp, stamp_seq, stamp_sub,
                                      timer_stamp)

_LONG = st.integers(-(2**62), 2**63 - 1)


@given(_LONG, st.booleans())
def test_a_timer_stamp_is_the_layout_keyed_process_wrote(time, event):
    assert timer_stamp(time, event) == b"\xff" * 8 + (b"\x01" if event else b"") + (time + 2**63).to_bytes(8, "big")


@given(_LONG, st.integers(0, 2**40), st.integers(0, 255))
def test_a_fire_stamp_is_the_layout_the_event_time_window_wrote(time, position, source):
    last = source_stamp(position, source)
    assert fire_stamp(time, last) == b"\xff" * 8 + b"\x02" + (time + 2**63).to_bytes(8, "big") + last


def test_a_key_end_stamp_is_the_layout_batch_timers_wrote():
    last = child_stamp(source_stamp(3, 1), 2)
    assert key_end_stamp(last, event=True) == last + b"\xff" * 4 + b"\x00"
    assert key_end_stamp(last, event=False) == last + b"\xff" * 4 + b"\x01"


@given(st.integers(0, 2**40), st.integers(0, 255), st.integers(0, 2**40), _LONG, st.booleans())
def test_timer_and_firing_outputs_come_after_every_record(position, source, other, time, event):
    record = child_stamp(source_stamp(position, source), 0)
    assert record < timer_stamp(time, event)
    assert record < fire_stamp(time, source_stamp(other, 0))


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
