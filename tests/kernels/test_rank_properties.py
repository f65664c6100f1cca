"""Property tests: for random changelogs, the kernels' output materializes to a plain reference.

The reference recomputes the answer from scratch after every batch: the live
rows per partition in arrival order (a retraction removes the earliest equal
row, as the kernel and Flink do), sorted by the sort key with ties by arrival,
cut to ``[rank_start, rank_end]``. Checking after every batch (not only at the
end) also checks that a mini-batch never leaves the sink in a state that no
prefix of the input explains.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from rank_helpers import DTYPES, dedup, top_n

from changeflow.testing import KernelHarness, delete_record, insert_record, materialize, update_after_record, \
    update_before_record
from changeflow.common.row import Row

KEYS = st.sampled_from(["a", "b", None])
VALUES = st.one_of(st.none(), st.integers(0, 4))
NAMES = st.sampled_from(["x", "y", "z"])


@st.composite
def changelogs(draw, retractions: bool):
    """Batches of records; retractions only of rows inserted before and still live."""
    live: list[tuple] = []
    batches = []
    for _ in range(draw(st.integers(1, 5))):
        batch = []
        for _ in range(draw(st.integers(0, 8))):
            if retractions and live and draw(st.booleans()):
                row = live.pop(draw(st.integers(0, len(live) - 1)))
                if draw(st.booleans()):
                    batch.append(delete_record(*row))
                else:
                    new = (row[0], draw(NAMES), draw(VALUES))
                    batch += [update_before_record(*row), update_after_record(*new)]
                    live.append(new)
            else:
                row = (draw(KEYS), draw(NAMES), draw(VALUES))
                batch.append(insert_record(*row))
                live.append(row)
        batches.append(batch)
    return batches


def reference_top_n(records, start, end, ascending, nulls_first, with_rank):
    live: list[tuple[int, tuple]] = []  # (arrival, row)
    for arrival, record in enumerate(records):
        row = tuple(record)
        if record.get_row_kind().is_retraction():
            matches = [i for i, (_, r) in enumerate(live) if r == row]
            if matches:
                live.pop(min(matches, key=lambda i: live[i][0]))
        else:
            live.append((arrival, row))

    def sort_key(item):
        arrival, row = item
        v = row[2]
        null_rank = 0 if nulls_first else 2
        return ((null_rank, 0) if v is None else (1, v if ascending else -v), arrival)

    result = []
    for key in {r[0] for _, r in live}:
        ranked = sorted((item for item in live if item[1][0] == key), key=sort_key)
        for rank, (_, row) in enumerate(ranked[start - 1:end], start):
            result.append(Row(*row, rank) if with_rank else Row(*row))
    return sorted(result, key=repr)


@settings(max_examples=150, deadline=None)
@given(data=st.data(), retractions=st.booleans(), mini_batch=st.booleans(), with_rank=st.booleans(),
       ascending=st.booleans(), nulls_first=st.booleans(), start=st.integers(1, 3), width=st.integers(0, 2))
def test_top_n_materializes_to_the_reference(data, retractions, mini_batch, with_rank, ascending, nulls_first,
                                             start, width):
    batches = data.draw(changelogs(retractions))
    end = start + width
    kernel = top_n(end, start=start, rank_column="rn" if with_rank else None, insert_only=not retractions,
                   mini_batch=mini_batch, ascending=ascending, nulls_first=nulls_first)
    h = KernelHarness(kernel, ["k", "name", "v"], dtypes=DTYPES)
    seen = []
    for batch in batches:
        h.process(batch)
        seen += batch
        expected = reference_top_n(seen, start, end, ascending, nulls_first, with_rank)
        assert sorted(materialize(h.changes), key=repr) == expected


@settings(max_examples=100, deadline=None)
@given(batches=changelogs(False), keep_last=st.booleans(), mini_batch=st.booleans())
def test_dedup_materializes_to_the_reference(batches, keep_last, mini_batch):
    h = KernelHarness(dedup(keep_last, mini_batch), ["k", "name", "v"], dtypes=DTYPES)
    seen = []
    for batch in batches:
        h.process(batch)
        seen += batch
        kept = {}
        for record in seen:
            if keep_last or record[0] not in kept:
                kept[record[0]] = Row(*record)
        assert sorted(materialize(h.changes), key=repr) == sorted(kept.values(), key=repr)


@settings(max_examples=60, deadline=None)
@given(batches=changelogs(True), with_rank=st.booleans())
def test_mini_batch_emits_at_most_one_change_per_rank_and_bundle(batches, with_rank):
    end = 3
    h = KernelHarness(top_n(end, rank_column="rn" if with_rank else None, insert_only=False, mini_batch=True),
                      ["k", "name", "v"], dtypes=DTYPES)
    for batch in batches:
        out = h.process(batch)
        per_key = {}
        for change in out:
            per_key[change[0]] = per_key.get(change[0], 0) + 1
        assert all(n <= 2 * end for n in per_key.values())


@st.composite
def retracting_changelogs(draw):
    """Batches of a valid retracting changelog plus some retractions of rows not held.

    Retractions (``-D``, or a ``-U``/``+U`` pair whose new row may move to another
    key) take rows currently live; an unmatched ``-D``/``-U`` names a random row.
    """
    live: list[tuple] = []
    batches = []
    for _ in range(draw(st.integers(1, 6))):
        batch = []
        for _ in range(draw(st.integers(0, 10))):
            action = draw(st.sampled_from(["insert", "insert", "delete", "update", "unmatched"]))
            if action in ("delete", "update") and live:
                row = live.pop(draw(st.integers(0, len(live) - 1)))
                if action == "delete":
                    batch.append(delete_record(*row))
                else:
                    new = (draw(KEYS), draw(NAMES), draw(VALUES))
                    batch += [update_before_record(*row), update_after_record(*new)]
                    live.append(new)
            elif action == "unmatched":
                row = (draw(KEYS), draw(NAMES), draw(VALUES))
                batch.append(draw(st.sampled_from([delete_record, update_before_record]))(*row))
            else:
                row = (draw(KEYS), draw(NAMES), draw(VALUES))
                batch.append(insert_record(*row))
                live.append(row)
        batches.append(batch)
    return batches


class ReferenceDedup:
    """Plain Python: per key the rows added and not retracted, in arrival order; the shown row is an end."""

    def __init__(self, keep_last):
        self.keep_last = keep_last
        self.history: dict = {}

    def shown(self, key):
        rows = self.history.get(key)
        return (rows[-1] if self.keep_last else rows[0]) if rows else None

    def apply(self, record):
        row, key = tuple(record), record[0]
        rows = self.history.setdefault(key, [])
        if record.get_row_kind().is_retraction():
            if row in rows:
                rows.remove(row)  # the oldest equal row
        else:
            rows.append(row)

    def table(self):
        return sorted((Row(*self.shown(k)) for k in self.history if self.shown(k) is not None), key=repr)


def transition(before, after):
    if before == after:
        return []
    if before is None:
        return [insert_record(*after)]
    if after is None:
        return [delete_record(*before)]
    return [update_before_record(*before), update_after_record(*after)]


@settings(max_examples=150, deadline=None)
@given(batches=retracting_changelogs(), keep_last=st.booleans(), mini_batch=st.booleans())
def test_dedup_over_retracting_input_materializes_to_the_reference(batches, keep_last, mini_batch):
    h = KernelHarness(dedup(keep_last, mini_batch, retracting=True), ["k", "name", "v"], dtypes=DTYPES)
    ref = ReferenceDedup(keep_last)
    for batch in batches:
        out = h.process(batch)
        # The changes themselves: per record, or one net change per key per bundle.
        expected, before, last_of = [], {}, {}
        for i, record in enumerate(batch):
            key = record[0]
            was = ref.shown(key)
            ref.apply(record)
            if mini_batch:
                before.setdefault(key, was)
                last_of[key] = i
            else:
                expected += transition(was, ref.shown(key))
        for key in sorted(before, key=last_of.get):
            expected += transition(before[key], ref.shown(key))
        assert [(r.get_row_kind(), tuple(r)) for r in out] == [(r.get_row_kind(), tuple(r)) for r in expected]
        # And their sum: the changelog so far materializes to the final shown row per key.
        assert sorted(materialize(h.changes), key=repr) == ref.table()
