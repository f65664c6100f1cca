"""Two-phase aggregation: local partials merged globally give the one-phase mini-batch output exactly.

Each bundle of random insert-only rows is split at random into partitions (rows
shuffled within each, as Spark's shuffle leaves them); every partition is
pre-aggregated by LocalGroupAggregate and the partials, shuffled again, are
merged by the global kernel. Across several bundles, with state carried over,
the emitted frames must equal the one-phase mini-batch kernel's frame for frame:
values, kinds, stamps and dtypes; and the stored state must be the same, so a
query may switch strategies across restarts.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from changeflow.common.types import DataTypes as T
from changeflow.kernels.aggregate import AggCall, GroupAggregate
from changeflow.kernels.aggregate.local import LocalGroupAggregate, mergeable
from changeflow.kernels.state import InMemoryKeyedState
from changeflow.testing import KernelHarness, insert_record, update_after_record

COLUMNS = ["k", "j", "x", "s", "d"]
DTYPES = {"k": object, "j": "Int64", "x": "Int64", "s": object, "d": "Float64"}
X, I, S, D = T.BIGINT(), T.INT(), T.STRING(), T.DOUBLE()


def agg(function, arg=None, arg_type=None):
    return AggCall(function, arg, arg_type, f"{function}_{arg or 'star'}_{arg_type or ''}".strip("_"))


CALLS = [
    agg("count_star"), agg("count", "x", X), agg("sum", "x", X), agg("sum0", "x", X), agg("avg", "x", X),
    agg("sum", "x", I), agg("avg", "x", I), agg("min", "x", X), agg("max", "x", X),
    agg("min", "s", S), agg("max", "s", S), agg("count", "d", D), agg("min", "d", D), agg("max", "d", D),
]

# Small values collide often (so "unchanged, emit nothing" is exercised); huge ones wrap.
xs = st.one_of(st.none(), st.integers(-3, 3), st.sampled_from([2**62, -(2**63), 2**31 - 1]))
rows = st.tuples(st.sampled_from(["a", "b", None]), st.one_of(st.none(), st.integers(0, 1)), xs,
                 st.one_of(st.none(), st.sampled_from(["p", "q", "r"])),
                 st.one_of(st.none(), st.sampled_from([-1.5, 0.0, 2.0])))


@st.composite
def bundles(draw):
    """Bundles of rows, each with a partition per row and shuffles of rows and partials."""
    out = []
    for _ in range(draw(st.integers(1, 4))):
        records = draw(st.lists(rows, min_size=1, max_size=16))
        partitions = draw(st.integers(1, 3))
        assignment = draw(st.lists(st.integers(0, partitions - 1), min_size=len(records), max_size=len(records)))
        out.append((records, assignment, draw(st.randoms(use_true_random=False))))
    return out


def two_phase(keys, calls, bundle_frames, state):
    local = LocalGroupAggregate(keys, calls)
    merge = GroupAggregate(keys, calls, mini_batch=True, input_insert_only=True, partial_input=True)
    for frame, assignment, rnd in bundle_frames:
        partials = []
        for p in sorted(set(assignment)):
            part = frame[np.asarray(assignment) == p]
            order = list(range(len(part)))
            rnd.shuffle(order)
            partials.append(local.process(part.iloc[order].reset_index(drop=True)))
        merged = pd.concat(partials, ignore_index=True)
        order = list(range(len(merged)))
        rnd.shuffle(order)
        yield merge.process(merged.iloc[order].reset_index(drop=True), state)


def one_phase(keys, calls, bundle_frames, state):
    kernel = GroupAggregate(keys, calls, mini_batch=True, input_insert_only=True)
    for frame, _, _ in bundle_frames:
        yield kernel.process(frame, state)


@pytest.mark.parametrize("keys", [["k"], ["k", "j"], []], ids=["one key", "two keys", "global"])
@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=bundles(), chosen=st.lists(st.sampled_from(CALLS), min_size=1, max_size=5, unique=True))
def test_local_partials_merged_globally_equal_one_phase_mini_batch(keys, data, chosen):
    h = KernelHarness(None, COLUMNS, dtypes=DTYPES)
    frames = [(h.frame([insert_record(*r) for r in records]), assignment, rnd)
              for records, assignment, rnd in data]
    one, two = InMemoryKeyedState(), InMemoryKeyedState()
    for expected, actual in zip(one_phase(keys, chosen, frames, one), two_phase(keys, chosen, frames, two),
                                strict=True):
        pd.testing.assert_frame_equal(actual, expected)
    every_key = pd.concat([f for f, _, _ in frames])[keys].drop_duplicates() if keys else pd.DataFrame(index=[0])
    assert one.tables() == two.tables() == ["acc"]
    pd.testing.assert_frame_equal(stored(two, every_key, keys), stored(one, every_key, keys))


def stored(state, every_key, keys):
    rows = state.load("acc", every_key)
    return rows.sort_values(keys, key=lambda c: c.astype(str)).reset_index(drop=True) if keys else rows


def test_partial_row_carries_the_keys_last_stamp_and_record_count():
    local = LocalGroupAggregate(["k"], [agg("max", "x", X)])
    h = KernelHarness(None, COLUMNS, dtypes=DTYPES)
    frame = h.frame([insert_record("a", 0, 5, None, None), insert_record("a", 0, None, None, None),
                     insert_record("b", 0, None, None, None)])
    frame["_seq"] = [30, 10, 20]
    out = local.process(frame)
    assert out[["k", "_count", "max_x_BIGINT.value", "_seq"]].astype(object).where(out.notna(), None).values.tolist() \
        == [["b", 1, None, 20], ["a", 2, 5, 30]]


def test_which_calls_can_be_split():
    assert all(mergeable(c) for c in CALLS)
    assert not mergeable(agg("sum", "d", D))  # float sums follow source order, one row at a time
    assert not mergeable(agg("avg", "d", D))
    assert not mergeable(AggCall("count", "x", X, "c", distinct=True))
    assert not mergeable(agg("first_value", "x", X))
    assert not mergeable(agg("listagg", "s", S))


def test_local_phase_rejects_retractions():
    local = LocalGroupAggregate(["k"], [agg("count_star")])
    frame = KernelHarness(None, COLUMNS, dtypes=DTYPES).frame([update_after_record("a", 0, 1, None, None)])
    with pytest.raises(ValueError, match="insert-only"):
        local.process(frame)


def test_global_phase_refuses_calls_that_cannot_merge():
    with pytest.raises(ValueError, match="cannot merge"):
        GroupAggregate(["k"], [agg("sum", "d", D)], mini_batch=True, input_insert_only=True, partial_input=True)
    with pytest.raises(ValueError, match="mini_batch"):
        GroupAggregate(["k"], [agg("count_star")], mini_batch=False, input_insert_only=True, partial_input=True)
