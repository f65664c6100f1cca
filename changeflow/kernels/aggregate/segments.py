"""Running scans over contiguous segments of an array, without Python loops.

A non-mini-batch aggregate needs, for every input row, the accumulator value
*after* that row: a running sum (or min, ...) that restarts at each key, and
again each time the key's accumulator is cleared. Rows are arranged so that
every such run is a contiguous *segment*; this module scans all segments at
once with numpy.

Floating-point sums must be computed strictly left to right from the stored
accumulator, as Flink's ``sum += x`` does, or results would drift from
Flink's in the last bits (and from what feeding the rows one batch at a time
gives). A global cumulative sum minus per-segment offsets is exact only for
integers, so floats use a padded matrix per segment-length class, whose
row-wise ``cumsum`` is a plain sequential loop.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

def group_order(codes: np.ndarray, groups: int) -> np.ndarray:
    """A stable permutation that makes equal codes contiguous (codes in ``0..groups-1``).

    numpy's stable sort is a radix sort, O(n), for integers of 16 bits or less: codes that fit sort in one
    pass, wider ones (up to 32 bits) in two, low half then high half (a least-significant-digit radix sort).

    >>> group_order(np.array([2, 0, 2, 1, 0]), 3).tolist()
    [1, 4, 3, 0, 2]
    >>> group_order(np.array([70000, 5, 70000, 65536]), 70001).tolist()
    [1, 3, 0, 2]
    """
    codes = np.asarray(codes)
    if groups <= 1 << 16:
        return np.argsort(codes.astype(np.uint16, copy=False), kind="stable")
    if groups <= 1 << 32:
        wide = codes.astype(np.uint32, copy=False)
        low = np.argsort((wide & 0xFFFF).astype(np.uint16), kind="stable")
        return low[np.argsort((wide[low] >> 16).astype(np.uint16), kind="stable")]
    return np.argsort(codes, kind="stable")


@dataclass
class Block:
    """Segments of similar length laid out as the rows of a padded matrix."""

    segments: np.ndarray  # segment indices, one per matrix row
    rows: np.ndarray  # array rows covered by those segments
    slot: np.ndarray  # matrix row of each of those array rows
    rank: np.ndarray  # matrix column (position in its segment) of each of those array rows
    width: int  # matrix columns: at least the longest segment's length


class Segments:
    """A partition of ``0..n-1`` into contiguous runs, given by their start positions.

    >>> s = Segments(np.array([0, 2]), 5)
    >>> s.cumsum(np.array([1, 2, 3, 4, 5]), base=np.array([10, 0])).tolist()
    [11, 13, 3, 7, 12]
    >>> s.scan(np.minimum, np.array([5, 1, 9, 7, 8]), base=np.array([3, 99])).tolist()
    [3, 1, 9, 7, 7]
    """

    def __init__(self, starts: np.ndarray, n: int) -> None:
        self.n = n
        self.starts = np.asarray(starts, dtype=np.int64)
        self.count = len(self.starts)
        self.lengths = np.diff(np.append(self.starts, n))
        self.ends = self.starts + self.lengths - 1  # last row of each segment
        self.of_row = np.repeat(np.arange(self.count), self.lengths)
        self.is_start = np.zeros(n, dtype=bool)
        self.is_start[self.starts] = True

    @staticmethod
    def from_sorted_ids(ids: np.ndarray) -> "Segments":
        """Segments of equal neighbouring values in ``ids`` (which must be grouped)."""
        n = len(ids)
        if n == 0:
            return Segments(np.empty(0, dtype=np.int64), 0)
        starts = np.flatnonzero(np.concatenate(([True], ids[1:] != ids[:-1])))
        return Segments(starts, n)

    def refine(self, extra_starts: np.ndarray) -> "Segments":
        """Segments that also start at every True position of ``extra_starts``."""
        return Segments(np.flatnonzero(self.is_start | extra_starts), self.n)

    def cumsum(self, x: np.ndarray, base: np.ndarray | None = None) -> np.ndarray:
        """Inclusive running sum within each segment, starting from ``base[segment]``."""
        if self.n == 0:
            return np.asarray(x).copy()
        if np.asarray(x).dtype.kind in "iub":
            x = np.asarray(x, dtype=np.int64)
            total = np.cumsum(x)
            # Integers wrap modulo 2**64 in numpy as in Java, so subtracting the
            # sum before the segment is exact even after an overflow.
            before = total[self.starts] - x[self.starts]
            out = total - before[self.of_row]
            if base is not None:
                out += np.asarray(base, dtype=np.int64)[self.of_row]
            return out
        return self.scan(np.add, x, base=np.zeros(self.count) if base is None else base)

    def scan(self, ufunc: np.ufunc, x: np.ndarray, base: np.ndarray) -> np.ndarray:
        """Inclusive running ``ufunc`` (add, minimum, maximum) within segments, seeded by ``base``.

        Each segment becomes a row of a matrix ``[base, x..., padding]`` whose
        ``ufunc.accumulate`` along the row is sequential.
        """
        x = np.asarray(x)
        base = np.asarray(base)
        dtype = np.result_type(x.dtype, base.dtype)
        out = np.empty(self.n, dtype=dtype)
        for block in self.blocks():
            matrix = np.empty((len(block.segments), block.width + 1), dtype=dtype)
            # Padding after a segment's last row never affects that row's result,
            # so any value will do; repeat the base to keep the dtype's domain.
            matrix[:] = base[block.segments][:, None]
            matrix[block.slot, block.rank + 1] = x[block.rows]
            out[block.rows] = ufunc.accumulate(matrix, axis=1)[block.slot, block.rank + 1]
        return out

    def blocks(self) -> "list[Block]":
        """The segments bucketed by length (powers of two), each bucket a padded matrix.

        Row ``slot[i]``, column ``rank[i]`` of a block's matrix holds row
        ``rows[i]``; bucketing keeps the padding below half of the matrix.
        """
        if self.n == 0:
            return []
        rank = np.arange(self.n) - self.starts[self.of_row]  # position inside the segment
        width_class = np.ceil(np.log2(np.maximum(self.lengths, 1))).astype(np.int64)
        row_class = width_class[self.of_row]
        out = []
        for cls in np.unique(width_class):
            segments = np.flatnonzero(width_class == cls)
            rows = np.flatnonzero(row_class == cls)
            slot_of_segment = np.full(self.count, -1, dtype=np.int64)
            slot_of_segment[segments] = np.arange(len(segments))
            out.append(Block(segments, rows, slot_of_segment[self.of_row[rows]], rank[rows], 1 << int(cls)))
        return out

    def last(self, x: np.ndarray) -> np.ndarray:
        """The value at the last row of each segment."""
        return np.asarray(x)[self.ends]
