"""The entry points the event-time joins share: a batch of two inputs split into one frame per input.

A two-input kernel's rows arrive either in one batch with a ``_side`` column
(0 left, 1 right) or, from the Spark host, as frames of one input each
(:meth:`~changeflow.kernels.contract.Kernel.process_frames`): both end in
:meth:`TwoInputs.process_sides` with each input's rows (or None).
"""

from __future__ import annotations

import pandas as pd

from changeflow.kernels.changelog import KIND, SEQ, SUB
from changeflow.kernels.contract import KernelBase
from changeflow.kernels.frames import select
from changeflow.kernels.join.join_rows import LEFT, RIGHT
from changeflow.kernels.join.join_state import SIDE
from changeflow.kernels.state import KeyedState


class TwoInputs(KernelBase):
    """A kernel over a left and a right input: subclasses implement :meth:`process_sides` and set
    ``columns`` (each input's output columns: left then right)."""

    columns: tuple[list[str], list[str]]

    @property
    def output_columns(self) -> list[str]:
        """The left input's columns, the right's, then the bookkeeping."""
        return self.columns[LEFT] + self.columns[RIGHT] + [KIND, SEQ, SUB]

    def process(self, batch: pd.DataFrame, state: KeyedState) -> pd.DataFrame:
        """One batch holding both inputs, told apart by a ``_side`` column (0 left, 1 right)."""
        if SIDE not in batch.columns:
            raise ValueError(f"join input lacks the {SIDE!r} column (0 left, 1 right); it has {list(batch.columns)}")
        sides = batch[SIDE].to_numpy()
        return self.process_sides(select(batch, sides == LEFT), select(batch, sides == RIGHT), state)

    def process_frames(self, frames: list[pd.DataFrame], state: KeyedState) -> pd.DataFrame:
        """A batch that arrived as frames of one input each (its ``_side`` column says which)."""
        parts: tuple[list[pd.DataFrame], list[pd.DataFrame]] = ([], [])
        for frame in frames:
            if len(frame):
                parts[int(frame[SIDE].iloc[0])].append(frame)
        left, right = (pd.concat(p, ignore_index=True) if p else None for p in parts)
        return self.process_sides(left, right, state)

    def process_sides(self, left: pd.DataFrame | None, right: pd.DataFrame | None,
                      state: KeyedState) -> pd.DataFrame:
        """One batch of each input (either may be None); what the kernel emits."""
        raise NotImplementedError(f"{type(self).__name__} does not implement process_sides()")


__all__ = ["TwoInputs"]
