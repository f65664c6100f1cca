"""A progress line for a running streaming query, on a terminal: what it has read, emitted and keeps.

Spark's own console progress bar is off in changeflow's sessions (it would
interleave with printed changelogs, and it counts Spark stages, which mean
nothing to a Flink user). Instead, while a program waits for a streaming query
on a terminal, one line on standard error shows the query's progress, rewritten
in place about twice a second and erased when the query ends::

    [changeflow] micro-batch 12 · 1,204,551 rows read · 48,102 rows/s · 3,310 changes out · 96,001 state rows

The figures are Spark's own (``StreamingQuery.lastProgress``, summed over the
micro-batches seen): input rows, the last batch's processing rate, rows the
sink received, and rows in the state stores of the query's stateful operators.
Nothing is shown when standard error is not a terminal (a log, a pipe, a test's
capture) or with ``CHANGEFLOW_PROGRESS=0``.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import sys
import threading
from collections.abc import Iterator
from typing import Any

from changeflow.runtime.query_progress import Totals

ENV = "CHANGEFLOW_PROGRESS"
INTERVAL_S = 0.5


def wanted(stream: Any = None) -> bool:
    """Whether a progress line goes to ``stream`` (standard error): a terminal, and not switched off."""
    stream = stream if stream is not None else sys.stderr
    if os.environ.get(ENV, "1").strip().lower() in ("0", "false", "no", "off"):
        return False
    return bool(getattr(stream, "isatty", lambda: False)())


@contextlib.contextmanager
def shown(query: Any, stream: Any = None) -> Iterator[None]:
    """While the block runs (waiting for ``query``), keep its progress line up to date on ``stream``."""
    stream = stream if stream is not None else sys.stderr
    if not wanted(stream) or threading.current_thread() is not threading.main_thread():
        yield  # a job's background thread (an INSERT) does not draw over the program's output
        return
    done = threading.Event()
    totals = Totals()

    def draw() -> None:
        while not done.wait(INTERVAL_S):
            try:
                totals.add(query.lastProgress)
            except Exception:  # the query ended between the check and the call: the line just stops
                return
            width = shutil.get_terminal_size((100, 20)).columns - 1
            stream.write("\r" + totals.line()[:width] + "\x1b[K")
            stream.flush()

    thread = threading.Thread(target=draw, name="changeflow-progress", daemon=True)
    thread.start()
    try:
        yield
    finally:
        done.set()
        thread.join()
        stream.write("\r\x1b[K")  # erased: the program's next output starts on a clean line
        stream.flush()
