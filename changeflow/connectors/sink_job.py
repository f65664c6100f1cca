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
It also records, in the job's directory, the last micro-batch delivered to the
sinks, so that the runtime can skip a repeated micro-batch for sinks that cannot
take one back (``print``): a job killed between delivering a micro-batch and
recording it delivers it again (at least once), any other repeat is skipped.

>>> job = SinkJob.fresh()
>>> len(job.writer), job.resumed, job.delivered()
(12, False, -1)
>>> job.mark_delivered(3); job.delivered()
3
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import Callable

from changeflow.connectors import filestore

_WRITER_FILE = "sink-writer"
_DELIVERED_FILE = "sink-delivered"


@dataclass(frozen=True)
class SinkJob:
    """The job a sink is written by: a writer id stable across restarts from one checkpoint."""

    writer: str
    resumed: bool = False
    directory: str | None = None  # the job's directory; None for a job that never resumes
    _delivered: list = field(default_factory=lambda: [-1], compare=False, repr=False)
    _occurrences: dict = field(default_factory=dict, compare=False, repr=False)

    @staticmethod
    def fresh() -> "SinkJob":
        """A job that never resumes (a batch job, an interactive query)."""
        return SinkJob(uuid.uuid4().hex[:12])

    def delivered(self) -> int:
        """The last micro-batch id delivered to the sinks (-1 before the first)."""
        if self.directory is not None:
            path = filestore.join(self.directory, _DELIVERED_FILE)
            store = filestore.store_for(path)
            if store.exists(path):
                return int(store.read_bytes(path).decode("ascii").strip() or -1)
            return -1
        return self._delivered[0]

    def occurrence(self, key: str) -> int:
        """How many sinks of this job asked for ``key`` before this call (0 for the first).

        A job opens its sinks in one order on every run, so the answer names a sink
        among those of one kind and target (two JDBC sinks of one statement) the same
        way after a restart: the sink keeps its record of committed micro-batches under it.

        >>> job = SinkJob.fresh()
        >>> [job.occurrence("a"), job.occurrence("b"), job.occurrence("a")]
        [0, 0, 1]
        """
        count = self._occurrences[key] = self._occurrences.get(key, -1) + 1
        return count

    def deliver_once(self, batch_id: int, deliver: Callable[[], None]) -> None:
        """Run ``deliver`` for micro-batch ``batch_id`` unless the sinks had it before a restart, then record it.

        >>> job, seen = SinkJob.fresh(), []
        >>> for batch in (0, 1, 1):
        ...     job.deliver_once(batch, lambda: seen.append(batch))
        >>> seen
        [0, 1]
        """
        if batch_id <= self.delivered():
            return  # delivered before a restart, not committed: the sinks have it already
        deliver()
        self.mark_delivered(batch_id)

    def mark_delivered(self, batch_id: int) -> None:
        """Record that micro-batch ``batch_id`` reached every sink."""
        self._delivered[0] = batch_id
        if self.directory is not None:
            filestore.write_atomically(filestore.join(self.directory, _DELIVERED_FILE), str(batch_id).encode("ascii"))

    @staticmethod
    def in_directory(workdir: str, resumed: bool) -> "SinkJob":
        """The writer id kept in a job's directory, created on the job's first run.

        >>> import tempfile
        >>> d = tempfile.mkdtemp()
        >>> SinkJob.in_directory(d, False).writer == SinkJob.in_directory(d, True).writer
        True
        """
        path = filestore.join(workdir, _WRITER_FILE)
        store = filestore.store_for(path)
        if store.exists(path):
            writer = store.read_bytes(path).decode("ascii").strip()
            if writer:
                return SinkJob(writer, resumed, workdir)
        writer = uuid.uuid4().hex[:12]
        filestore.write_atomically(path, writer.encode("ascii"))
        return SinkJob(writer, resumed, workdir)

