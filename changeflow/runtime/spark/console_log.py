"""Keep Spark's console chatter out of a program's output: the JVM's stdout and stderr go to a log file.

A local Spark prints log4j warnings and, for every stateful operator of a streaming
query, several lines of its Python driver worker ("Starting Streaming
TransformWithStateInPandas Python worker ...") onto the terminal the program runs
in, between the program's own results. None of it is the program's output, and
the worker's lines cannot be switched off by a log level: the worker ``print``\\ s
them and the JVM copies them onto its own stderr.

The JVM is a child process of the driver's Python (pyspark's ``launch_gateway``),
started with the parent's standard output and error, and every Python worker of
a local session inherits them from the JVM. So changeflow points file
descriptors 1 and 2 at a log file just while the JVM starts, then points them
back: the JVM (and every worker it starts) writes to the file from then on, and
the Python program's own prints, the results ``print()`` shows and a failing
job's error are unchanged. The redirect is of file descriptors, not of
``sys.stdout``, because the JVM inherits descriptors.

``changeflow.spark.log`` chooses: unset, ``spark.log`` in changeflow's temp
directory of the process (:mod:`.temp_root`); a path; or ``console`` to leave
Spark's output on the terminal. A session the user passes in is never touched.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator

from changeflow.runtime.spark import temp_root

CONSOLE = "console"


def target(setting: str | None) -> str | None:
    """The log file for a ``changeflow.spark.log`` setting (None: Spark's output stays on the console)."""
    if setting is not None and setting.strip().lower() == CONSOLE:
        return None
    if setting:
        return os.path.abspath(os.path.expanduser(setting))
    return os.path.join(temp_root.process_dir(), "spark.log")


@contextlib.contextmanager
def jvm_output_to(path: str | None) -> Iterator[None]:
    """While the block runs (the JVM's start), file descriptors 1 and 2 write to ``path``."""
    if path is None:
        yield
        return
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    for stream in (sys.stdout, sys.stderr):
        stream.flush()
    log = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    saved = [os.dup(1), os.dup(2)]
    try:
        os.dup2(log, 1)
        os.dup2(log, 2)
        yield
    finally:
        for stream in (sys.stdout, sys.stderr):
            stream.flush()
        os.dup2(saved[0], 1)
        os.dup2(saved[1], 2)
        for fd in (*saved, log):
            os.close(fd)
