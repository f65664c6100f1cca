"""Record frames for the keyed kernels, built from Python values."""

from __future__ import annotations


from changeflow.kernels.keyed.records import VALUE, dumps, loads, record_frame
from changeflow.kernels.order import STAMP, source_stamp


def records(values, key=lambda v: v[0], start=0):
    """A keyed record frame of ``values`` at source positions ``start, start+1, ...``."""
    return record_frame([dumps(v) for v in values], [source_stamp(start + i, 0) for i in range(len(values))],
                        [dumps(key(v)) for v in values])


def values(frame):
    """The records of an output frame, in stamp order."""
    return [loads(v) for v in frame.sort_values(STAMP, kind="stable")[VALUE]]
