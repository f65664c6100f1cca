"""A host's batch with the watermarks that arrived among its rows, applied segment by segment.

On Spark a micro-batch carries its rows and the watermarks the assigner
emitted between them (``(position, watermark)``: the watermark follows the
rows whose ``_seq`` is at most ``position``). Flink's operator sees them
interleaved, so a kernel must see the rows before a watermark, then the
watermark, then the rows after it. :func:`apply_by_segments` does exactly that
with the kernel's ``process_frames`` and ``on_watermark`` (the default of
:meth:`~changeflow.kernels.contract.Kernel.process_with_watermarks`); a kernel
that can judge each row against the watermark in force at its position
overrides it with one vectorised pass (the window aggregation).

What a watermark fires is stamped at the watermark's position
(:func:`stamp_fired`): after the outputs of the rows there, so the next
operator sees it before that watermark too.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np
import pandas as pd

from changeflow.kernels.changelog import SEQ, SUB

# A DataStream record frame's pickled column (changeflow.kernels.keyed.records.VALUE: importing it here
# would import changeflow.kernels.keyed, which imports the contract, which imports this module).
VALUE = "_value"

# The _sub of what a watermark fires: after every output a row at the same position can stamp.
FIRED_SUB = 1 << 40


def stamp_fired(fired: pd.DataFrame | None, position: int) -> pd.DataFrame | None:
    """What a watermark (or the end of input) fired, stamped to follow the rows up to ``position``.

    Its rows keep their order: ``_sub`` counts up from :data:`FIRED_SUB`. A frame
    of DataStream records (``_value``: their stamps are their own, ``changeflow.kernels.order``)
    is returned as it is.

    >>> stamp_fired(pd.DataFrame({"_seq": [9, 4], "_sub": [0, 1]}), 7).values.tolist()
    [[7, 1099511627776], [7, 1099511627777]]
    """
    if fired is None or not len(fired) or SEQ not in fired.columns or VALUE in fired.columns:
        return fired
    return fired.assign(**{SEQ: np.full(len(fired), position, dtype=np.int64),
                           SUB: FIRED_SUB + np.arange(len(fired), dtype=np.int64)})


def segment_of(seqs: np.ndarray, positions: np.ndarray) -> np.ndarray:
    """For rows at ``seqs``, how many of the watermarks at ``positions`` (ascending) precede each row.

    A watermark at position ``p`` follows the rows with ``_seq <= p``.

    >>> segment_of(np.array([0, 3, 4, 9]), np.array([3, 8])).tolist()
    [0, 0, 1, 2]
    """
    return np.searchsorted(positions, seqs, side="left")


def segments(frames: Sequence[pd.DataFrame], positions: np.ndarray) -> list[list[pd.DataFrame]]:
    """``frames`` cut at the watermark positions: ``len(positions) + 1`` lists of non-empty frames.

    One sort per frame (stable: rows keep their order within a segment), then
    slices, rather than a mask per watermark over the rows left. A frame of
    DataStream records (``_value``: a micro-batch's records precede its watermarks)
    goes whole into the first segment.
    """
    out: list[list[pd.DataFrame]] = [[] for _ in range(len(positions) + 1)]
    for frame in frames:
        if not len(frame):
            continue
        if VALUE in frame.columns:
            out[0].append(frame)
            continue
        segment = segment_of(frame[SEQ].to_numpy(dtype=np.int64), positions)
        order = np.argsort(segment, kind="stable")
        bounds = np.searchsorted(segment[order], np.arange(len(positions) + 2), side="left")
        ordered = frame.iloc[order] if (np.diff(segment) < 0).any() else frame
        for i in range(len(positions) + 1):
            if bounds[i + 1] > bounds[i]:
                out[i].append(ordered.iloc[bounds[i]:bounds[i + 1]])
    return out


def apply_by_segments(kernel: Any, frames: Sequence[pd.DataFrame], watermarks: Sequence[tuple[int, int]],
                      state: Any) -> pd.DataFrame | None:
    """``kernel``'s rows and watermarks in position order: ``process_frames`` of the rows up to a
    watermark's position, then ``on_watermark`` (what it fires stamped there), and so on; the rows
    after the last watermark last. ``current_watermark`` follows each watermark applied."""
    positions = np.asarray([p for p, _ in watermarks], dtype=np.int64)
    parts = segments(frames, positions)
    outputs = []
    for i, rows in enumerate(parts):
        if rows:
            outputs.append(kernel.process_frames(rows, state))
        if i < len(watermarks):
            position, watermark = watermarks[i]
            outputs.append(stamp_fired(kernel.on_watermark(watermark, state), position))
            kernel.current_watermark = watermark
    outputs = [o for o in outputs if o is not None and len(o)]
    if not outputs:
        return None
    return outputs[0] if len(outputs) == 1 else pd.concat(outputs, ignore_index=True)


__all__ = ["FIRED_SUB", "apply_by_segments", "rank_within", "segment_of", "segments", "stamp_fired"]


def rank_within(groups: np.ndarray) -> np.ndarray:
    """Each element's place among the equal ones before it, for ``groups`` sorted ascending
    (the ``_sub`` order of the rows a fired window emits).

    >>> rank_within(np.array([0, 0, 2, 2, 2])).tolist()
    [0, 1, 0, 1, 2]
    """
    starts = np.flatnonzero(np.r_[True, groups[1:] != groups[:-1]]) if len(groups) else np.zeros(0, np.int64)
    return np.arange(len(groups), dtype=np.int64) - np.repeat(starts, np.diff(np.r_[starts, len(groups)]))
