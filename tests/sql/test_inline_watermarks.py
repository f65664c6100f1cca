"""The watermark assigner run inside a packing stage (runtime/spark/inline_watermarks.py), without Spark."""

from __future__ import annotations

import pickle

import numpy as np
import pandas as pd

from changeflow.runtime.spark.control_rows import WATERMARK, Control, ControlFanOut
from changeflow.kernels.watermark_emissions import emitted_watermarks
from changeflow.runtime.spark.inline_watermarks import ASSIGNED, InlineWatermarks
from changeflow.runtime.spark.packing import PAYLOAD

COLUMNS = ["k", "_kind", "_seq", "_sub", ASSIGNED]


def _frames(values: list[float], splits: list[int]) -> list[pd.DataFrame]:
    n = len(values)
    frame = pd.DataFrame({"k": np.arange(n) % 3, "_kind": np.zeros(n, dtype=np.int8),
                          "_seq": np.arange(10, 10 + n, dtype=np.int64), "_sub": np.zeros(n, dtype=np.int64),
                          ASSIGNED: np.asarray(values, dtype=np.float64)})
    bounds = [0, *splits, n]
    return [frame.iloc[a:b].reset_index(drop=True) for a, b in zip(bounds, bounds[1:], strict=False)]


def test_the_packing_stage_gets_the_watermarks_the_assigner_stage_would_add_however_the_rows_are_split():
    rng = np.random.default_rng(5)
    values = list((np.arange(400) * 3 - rng.integers(0, 500, 400)).astype(float))
    values[37] = np.nan   # a control row's null watermark value: skipped, as by the assigner stage
    marks, _, pending = emitted_watermarks(np.asarray(values), np.arange(10, 410), None, None, 200)
    expected = tuple(sorted({(2, p, w) for p, w in marks + ([pending] if pending else [])}, key=lambda m: m[1]))
    assert len(expected) > 3
    for splits in ([], [1, 150, 151, 399], [200]):
        received: list[pd.DataFrame] = []

        def packer(frames, received=received):
            received.extend(frames)   # the data frames only: ControlFanOut takes the watermark rows out
            return iter(())

        stage = InlineWatermarks(ControlFanOut(packer, COLUMNS, 4, ticks=False), COLUMNS, 2, 200)
        out = pd.concat(list(stage(iter(_frames(values, splits)))))
        controls = {pickle.loads(p) for p in out[PAYLOAD]}
        assert controls == {Control(watermarks=expected)}, splits
        data = pd.concat(received, ignore_index=True)
        assert (data["_kind"] < WATERMARK).all() and data["_seq"].tolist() == list(range(10, 410))


def test_a_shifted_time_column_gives_the_watermarks_of_its_epoch_milliseconds_plus_the_shift():
    # ``ts - INTERVAL '2' SECOND``: the packing stage gets ts itself (event_time.watermark_column) and adds
    # the shift; its watermarks are those of the values Spark's unix_millis(ts - 2 s) gave before.
    rng = np.random.default_rng(9)
    micros = (np.arange(300) * 2_713 - rng.integers(0, 900_000, 300)).astype(np.int64) - 5_000_000   # some < 1970
    stamps = pd.Series(micros.astype("datetime64[us]")).astype("datetime64[ns]")
    stamps[11] = pd.NaT   # a control row: no watermark value
    millis = np.floor_divide(micros, 1000).astype(float) - 2_000
    millis[11] = np.nan

    def controls(values, shift):
        def packer(frames):
            list(frames)
            return iter(())

        frames = _frames(list(range(300)), [100])
        for frame, part in zip(frames, (values[:100], values[100:]), strict=True):
            frame[ASSIGNED] = np.asarray(part)
        stage = InlineWatermarks(ControlFanOut(packer, COLUMNS, 4, ticks=False), COLUMNS, 2, 200, shift)
        return {pickle.loads(p) for p in pd.concat(list(stage(iter(frames))))[PAYLOAD]}

    shifted = controls(stamps.to_numpy(), -2_000)
    assert shifted == controls(millis, None) and len(next(iter(shifted)).watermarks) > 3
