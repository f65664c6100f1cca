"""Property: for random changelogs on both sides, the join's changelog materializes to the join of the inputs.

Random +I/+U and -D/-U changes (a retraction only takes away a row its side holds)
arrive on both sides in random batches; every join type, with and without a
non-equi condition, per record and in mini-batch mode. Materializing the output
must never retract a row it does not hold and must end at a straightforward
reference join of the two final inputs.
"""

from __future__ import annotations

from collections import Counter

from hypothesis import given, settings
from hypothesis import strategies as st

from changeflow.kernels.join.condition import compile_pair_condition
from changeflow.testing.harness import materialize
from changeflow.table.expressions import col

from join_helpers import left, make_join, right

CONDITIONS = {"none": None, "v<=v0": col("v") <= col("v0"), "v+v0 odd": ((col("v") + col("v0")) % 2) == 1}
KEYS = st.one_of(st.none(), st.integers(0, 2))
VALUES = st.one_of(st.none(), st.integers(0, 3))


@st.composite
def changelogs(draw, unique_left: bool = False, *, retract: bool = True, insert_kinds=("+I", "+U"),
               max_batches: int = 6, max_rows: int = 8):
    """Batches of (side, kind, k, v) changes that never retract a row the side does not hold.

    ``unique_left``: the left side is an upsert stream of its key k; ``retract`` False: the
    other rows are only added, with a kind of ``insert_kinds``.
    """
    held = ([], [])
    batches = []
    for _ in range(draw(st.integers(1, max_batches))):
        batch = []
        for _ in range(draw(st.integers(1, max_rows))):
            side = draw(st.integers(0, 1))
            if unique_left and side == 0:
                k = draw(st.integers(0, 2))
                old = [r for r in held[0] if r[0] == k]
                new = (k, draw(VALUES))
                if old and draw(st.booleans()):
                    held[0].remove(old[0])
                    batch.append((0, "-D", *old[0]))
                elif old:
                    held[0].remove(old[0])
                    held[0].append(new)
                    batch += [(0, "-U", *old[0]), (0, "+U", *new)]
                else:
                    held[0].append(new)
                    batch.append((0, "+I", *new))
                continue
            if retract and held[side] and draw(st.booleans()):
                row = draw(st.sampled_from(held[side]))
                held[side].remove(row)
                batch.append((side, draw(st.sampled_from(["-D", "-U"])), *row))
            else:
                row = (draw(KEYS), draw(VALUES))
                held[side].append(row)
                batch.append((side, draw(st.sampled_from(list(insert_kinds))), *row))
        batches.append(batch)
    return batches, held


def reference_join(join_type, condition, lefts, rights):
    test = compile_pair_condition(condition, ["k", "v"], ["k0", "v0"]) if condition is not None else None
    out = []
    matched_right = Counter()
    for l in lefts:
        matches = [r for r in rights if l[0] is not None and l[0] == r[0] and (test is None or test(l, r))]
        out += [l + r for r in matches]
        for r in matches:
            matched_right[r] += 1
        if not matches and join_type in ("LEFT", "FULL"):
            out.append(l + (None, None))
    if join_type in ("RIGHT", "FULL"):
        out += [(None, None) + r for r in rights if matched_right[r] == 0]
    return sorted(out, key=repr)


def run(join_type, condition, mini_batch, batches, unique_left=False):
    h = make_join(join_type, condition, mini_batch=mini_batch, left_unique_key=["k"] if unique_left else None)
    for batch in batches:
        h.process([left(kind, k, v) if side == 0 else right(kind, k, v) for side, kind, k, v in batch])
    return sorted((tuple(r) for r in materialize(h.changes)), key=repr)


@settings(max_examples=300, deadline=None)
@given(log=changelogs(), join_type=st.sampled_from(["INNER", "LEFT", "RIGHT", "FULL"]),
       condition=st.sampled_from(sorted(CONDITIONS)), mini_batch=st.booleans())
def test_join_changelog_materializes_to_the_reference_join(log, join_type, condition, mini_batch):
    batches, (lefts, rights) = log
    assert run(join_type, CONDITIONS[condition], mini_batch, batches) == \
        reference_join(join_type, CONDITIONS[condition], lefts, rights)


@settings(max_examples=200, deadline=None)
@given(log=changelogs(unique_left=True), join_type=st.sampled_from(["INNER", "LEFT", "RIGHT", "FULL"]),
       condition=st.sampled_from(sorted(CONDITIONS)))
def test_mini_batch_with_a_unique_key_materializes_to_the_reference_join(log, join_type, condition):
    # Updates of the left side come as -U/+U pairs of its unique key k, which the
    # bundle folds and joins with suppression of the right side's padding (also
    # when a non-equi condition makes the update change its matches).
    batches, (lefts, rights) = log
    assert run(join_type, CONDITIONS[condition], True, batches, unique_left=True) == \
        reference_join(join_type, CONDITIONS[condition], lefts, rights)
