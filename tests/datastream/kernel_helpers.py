"""Record frames for the keyed kernels, built from Python values."""

from __future__ import annotations

import pandas as pd

from changeflow.kernels.keyed.records import KEY, VALUE, dumps, loads
from changeflow.kernels.order import ORD, source_stamp


def records(values, key=lambda v: v[0], start=0):
    """A keyed record frame of ``values`` at source positions ``start, start+1, ...``."""
    return pd.DataFrame({KEY: [dumps(key(v)) for v in values], VALUE: [dumps(v) for v in values],
                         ORD: [source_stamp(start + i, 0) for i in range(len(values))]})


def values(frame):
    """The records of an output frame, in stamp order."""
    return [loads(v) for v in frame.sort_values(ORD, kind="stable")[VALUE]]
