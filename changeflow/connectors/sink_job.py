"""What a sink is told about the job writing it, so that a restarted job neither loses nor repeats output.

A streaming job hands each micro-batch to its sink before Spark commits the
micro-batch; a job stopped in between runs that micro-batch again when it
resumes, with the same batch id. A sink that remembers which job and batch
wrote what can therefore make the repeat replace the first write instead of
adding to it (the filesystem sink), or refuse to resume where it cannot
(the in-memory ``materialized`` table).

``SinkJob`` carries that identity: ``writer`` is fixed for the life of a job's
checkpoint (kept in the job's directory, so a job resumed from its checkpoint
has the writer of its first run, and a job started afresh a new one), and
``resumed`` says whether the checkpoint already had committed micro-batches.

>>> job = SinkJob.fresh()
>>> len(job.writer), job.resumed
(12, False)
"""

from __future__ import annotations

import os
import uuid
from dataclasses import dataclass

_WRITER_FILE = "sink-writer"


@dataclass(frozen=True)
class SinkJob:
    """The job a sink is written by: a writer id stable across restarts from one checkpoint."""

    writer: str
    resumed: bool = False

    @staticmethod
    def fresh() -> "SinkJob":
        """A job that never resumes (a batch job, an interactive query)."""
        return SinkJob(uuid.uuid4().hex[:12])

    @staticmethod
    def in_directory(workdir: str, resumed: bool) -> "SinkJob":
        """The writer id kept in a job's directory, created on the job's first run.

        >>> import tempfile
        >>> d = tempfile.mkdtemp()
        >>> SinkJob.in_directory(d, False).writer == SinkJob.in_directory(d, True).writer
        True
        """
        path = os.path.join(workdir, _WRITER_FILE)
        if os.path.exists(path):
            with open(path, encoding="ascii") as f:
                writer = f.read().strip()
            if writer:
                return SinkJob(writer, resumed)
        writer = uuid.uuid4().hex[:12]
        hidden = os.path.join(workdir, f".{_WRITER_FILE}.tmp")
        with open(hidden, "w", encoding="ascii") as f:
            f.write(writer)
        os.replace(hidden, path)
        return SinkJob(writer, resumed)
