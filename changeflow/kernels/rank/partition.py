"""The rows of one Top-N partition in rank order, and the changes one step emits.

A :class:`Partition` is the sorted list a Top-N keeps per partition key: parallel
lists of sort codes (:mod:`.sort_codes`) and row ids (positions in the frame of
all rows the kernel holds in this call). Rows with equal sort keys keep arrival
order: a new row goes after its equals, a retraction removes the first equal row
with the same content, as Flink's RetractableTopNFunction and
AppendOnlyTopNFunction do.

The emission rules are Flink's (``AbstractTopNFunction`` with
``generateUpdateBefore``), restated as what changes at which rank:

* with the row number, with ``rank_start > 1`` (Flink then uses the
  row-number algorithm even when the number is not selected), or for a Top-1
  over insert-only input (Flink's FastTop1Function): every rank in
  ``[rank_start, rank_end]`` from the changed position down is compared by
  position; a rank that had a row and still has one emits ``-U(old), +U(new)``
  (also when both rows are equal, as Flink does), a rank that gains a row
  ``+I``, one that loses it ``-D``; ranks in ascending order;
* without it: an accumulated row that lands in the top N emits ``-D`` of the row
  it pushes out to rank N+1 (if any), then ``+I`` of itself; a retracted row in
  the top N emits ``-D`` of itself, then ``+I`` of the row promoted to rank N
  (if any).
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections import Counter
from typing import Callable

from changeflow.kernels.changelog import DELETE, INSERT, UPDATE_AFTER, UPDATE_BEFORE

# An emitted change: (kind, row id, rank).
Change = tuple[int, int, int]


class Partition:
    """Rows of one partition key in rank order (see the module docstring)."""

    __slots__ = ("codes", "rows")

    def __init__(self, codes: list[tuple], rows: list[int]) -> None:
        self.codes = codes
        self.rows = rows

    def __len__(self) -> int:
        return len(self.rows)

    def insert(self, code: tuple, row: int) -> int:
        """Insert after the rows with an equal sort key; return the 0-based position."""
        pos = bisect_right(self.codes, code)
        self.codes.insert(pos, code)
        self.rows.insert(pos, row)
        return pos

    def find(self, code: tuple, same: Callable[[int], bool]) -> int:
        """Position of the first row with sort key ``code`` for which ``same(row)``, or -1."""
        for pos in range(bisect_left(self.codes, code), bisect_right(self.codes, code)):
            if same(self.rows[pos]):
                return pos
        return -1

    def remove(self, pos: int) -> int:
        del self.codes[pos]
        return self.rows.pop(pos)

    def truncate(self, size: int) -> None:
        del self.codes[size:]
        del self.rows[size:]


class TopNRules:
    """Which changes an accumulate or a retract emits (see the module docstring)."""

    def __init__(self, rank_start: int, rank_end: int, with_row_number: bool) -> None:
        self.start = rank_start
        self.end = rank_end
        # Flink: "the without-number-algorithm can't handle topN with offset".
        self.positional = with_row_number or rank_start > 1

    def accumulate(self, part: Partition, code: tuple, row: int, keep_all: bool, out: list[Change]) -> None:
        """Add ``row``; ``keep_all`` keeps rows below the top N (retracting input needs them)."""
        before = len(part)
        pos = part.insert(code, row)
        if pos < self.end:
            if self.positional:
                last = min(self.end, before + 1)
                for rank in range(max(pos + 1, self.start), last + 1):
                    if rank <= before:
                        # the row at this rank before the insert is now one further down
                        out.append((UPDATE_BEFORE, part.rows[rank], rank))
                        out.append((UPDATE_AFTER, part.rows[rank - 1], rank))
                    else:
                        out.append((INSERT, part.rows[rank - 1], rank))
            else:
                if before >= self.end:
                    out.append((DELETE, part.rows[self.end], self.end + 1))
                out.append((INSERT, row, pos + 1))
        if not keep_all:
            part.truncate(self.end)

    def retract(self, part: Partition, pos: int, out: list[Change]) -> None:
        """Remove the row at ``pos`` (found by :meth:`Partition.find`)."""
        before = len(part)
        removed = part.remove(pos)
        if pos >= self.end:
            return
        if self.positional:
            for rank in range(max(pos + 1, self.start), min(self.end, before) + 1):
                old = removed if rank == pos + 1 else part.rows[rank - 2]
                if rank <= before - 1:
                    out.append((UPDATE_BEFORE, old, rank))
                    out.append((UPDATE_AFTER, part.rows[rank - 1], rank))
                else:
                    out.append((DELETE, old, rank))
        else:
            out.append((DELETE, removed, pos + 1))
            if before > self.end:
                out.append((INSERT, part.rows[self.end - 1], self.end))

    def diff(self, before: list[int], after: list[int], content: Callable[[int], tuple], out: list[Change]) -> None:
        """The net change of the top N from ``before`` to ``after`` (mini-batch folding).

        Nothing is emitted for a rank (or, without the row number, a row) whose
        content did not change.
        """
        if self.positional:
            for rank in range(self.start, self.end + 1):
                old = before[rank - 1] if rank <= len(before) else None
                new = after[rank - 1] if rank <= len(after) else None
                if old is None and new is None:
                    break
                if old is not None and new is not None:
                    if content(old) != content(new):
                        out.append((UPDATE_BEFORE, old, rank))
                        out.append((UPDATE_AFTER, new, rank))
                elif old is not None:
                    out.append((DELETE, old, rank))
                elif new is not None:
                    out.append((INSERT, new, rank))
            return
        top_before, top_after = before[: self.end], after[: self.end]
        remaining = Counter(content(r) for r in top_after)
        for rank, row in enumerate(top_before, 1):
            c = content(row)
            if remaining[c]:
                remaining[c] -= 1
            else:
                out.append((DELETE, row, rank))
        kept = Counter(content(r) for r in top_before)
        for rank, row in enumerate(top_after, 1):
            c = content(row)
            if kept[c]:
                kept[c] -= 1
            else:
                out.append((INSERT, row, rank))
