"""Writing a ``PARTITIONED BY`` filesystem table: one file per partition and batch, then partition commit.

Each batch's rows are grouped by their partition values; each group is one file
(the data columns only) in the partition's directory, published as the unpartitioned
sink publishes its files (:mod:`.part_files`), so a micro-batch a restarted job runs
again replaces its own earlier files instead of adding to them. The only batch that
can run again is the first one after a restart (the job's directory records the last
one delivered, :mod:`.sink_job`); if that run has rows for fewer partitions than the
first attempt, the first attempt's files in the others are removed.

Partition commit (:mod:`.partitions`): the partitions written since their last commit
are *pending*, each with the time it was first written; after every batch the commit
trigger picks the pending partitions that are ready and the ``success-file`` policy
writes the success file into each. The pending partitions are kept in the job's
directory beside its checkpoint, so a job resumed from its checkpoint still commits
the partitions its earlier run wrote, as Flink keeps them in the committer's state.
"""

from __future__ import annotations

import hashlib
import json
import time
from typing import TYPE_CHECKING, Callable

from changeflow.catalog import CatalogTable
from changeflow.common.change import Change
from changeflow.common.row_kind import RowKind
from changeflow.connectors import filestore
from changeflow.connectors.changelog_encoding import ChangelogEncoder
from changeflow.connectors.changelog_formats import ChangelogJsonFormat
from changeflow.connectors.part_files import PART, PartDirectory
from changeflow.connectors.partitions import check_partition_types, commit_options, committable, partition_path
from changeflow.connectors.sink_job import SinkJob

if TYPE_CHECKING:
    from changeflow.connectors.filesystem import FileSystemSink


class PartitionedWriter:
    """The partitioned half of a :class:`~.filesystem.FileSystemSink`: directories, files and commits."""

    def __init__(self, table: CatalogTable, sink: "FileSystemSink") -> None:
        check_partition_types(table, True)
        fmt = sink.format
        # The sink refuses changelog formats with PARTITIONED BY first: a value format remains.
        assert not isinstance(fmt, (ChangelogEncoder, ChangelogJsonFormat))
        self._encode = fmt.encode
        self.table = table
        self.sink = sink
        self.options = commit_options(table)
        names = [n for n, _ in sink.schema]
        self._key_positions = [names.index(k) for k in table.partition_keys]
        self._data_positions = [i for i, n in enumerate(names) if n not in table.partition_keys]
        self._data_schema = tuple(sink.schema[i] for i in self._data_positions)
        self._directories: dict[str, PartDirectory] = {}
        self.pending: dict[str, int] = {}  # partition (relative path) -> when it was first written (ms)
        self.watermark: int | None = None  # the query's, for the partition-time trigger
        self.clock: Callable[[], float] = time.time
        self._job: SinkJob | None = None
        self._first_after_resume = False

    def open(self, job: SinkJob) -> None:
        self._job = job
        self._directories = {}
        self.pending = self._load_pending()
        self._first_after_resume = job.resumed

    def write(self, changes: list[Change], batch_id: int | None) -> None:
        """Write one batch: a file per partition it has rows for; then commit the partitions that are ready."""
        job = self._job or SinkJob.fresh()
        self._job = job
        groups: dict[str, list[tuple]] = {}
        default = self.options.default_name
        for c in changes:
            if c.kind is not RowKind.INSERT:
                raise ValueError(f"filesystem sink {self.sink.path} received a {c.kind} change {c.values}; "
                                 "a partitioned table appends insert-only input")
            values = c.values
            part = partition_path(self.table.partition_keys, tuple(values[i] for i in self._key_positions), default)
            groups.setdefault(part, []).append(tuple(values[i] for i in self._data_positions))
        if self._first_after_resume and batch_id is not None:
            self._drop_stale(job.writer, batch_id, set(groups))
        self._first_after_resume = False
        now = int(self.clock() * 1000)
        for part, rows in groups.items():
            self._directory(part).write(self._encode(rows, self._data_schema), job.writer, batch_id)
            if self.options.success_file is not None:
                self.pending.setdefault(part, now)
        self._commit(committable(self.table, self.options, self.pending, int(self.clock() * 1000), self.watermark))

    def commit_all(self) -> None:
        """End of input: every pending partition commits, whatever its trigger says (as Flink's committer)."""
        self._commit(list(self.pending))

    def _directory(self, part: str) -> PartDirectory:
        found = self._directories.get(part)
        if found is None:
            found = self._directories[part] = PartDirectory(filestore.join(self.sink.path, *part.split("/")))
        return found

    def _drop_stale(self, writer: str, batch_id: int, kept: set[str]) -> None:
        """Remove the files a first attempt of ``batch_id`` wrote in partitions its re-run has no rows for."""
        root = self.sink.path
        for path in filestore.walk_files(root, lambda n: not n.startswith((".", "_")), str, str):
            match = PART.match(filestore.basename(path))
            if match is None or match.group(2) != writer or int(match.group(3)) != batch_id:
                continue
            part = filestore.parent(path)[len(root.rstrip("/")) + 1:].replace("\\", "/")
            if part not in kept:
                filestore.store_for(path).delete(path)
                self._directories.pop(part, None)
                self.pending.pop(part, None)

    def _commit(self, ready: list[str]) -> None:
        name = self.options.success_file
        if name is None:
            return
        for part in ready:
            marker = filestore.join(self.sink.path, *part.split("/"), name)
            filestore.store_for(marker).write_bytes(marker, b"")  # empty, as Flink's success file
            del self.pending[part]
            self._directories.pop(part, None)  # a committed partition's listing is re-read if it gets more rows
        self._save_pending()

    def _state_path(self) -> str | None:
        job = self._job
        if job is None or job.directory is None:
            return None  # a job that never resumes keeps its pending partitions in memory
        digest = hashlib.sha1(self.sink.path.encode("utf-8")).hexdigest()[:12]  # one file per sink of the job
        return filestore.join(job.directory, f"sink-partitions-{digest}.json")

    def _load_pending(self) -> dict[str, int]:
        path = self._state_path()
        if path is None or not filestore.store_for(path).exists(path):
            return {}
        return {str(k): int(v) for k, v in json.loads(filestore.store_for(path).read_bytes(path)).items()}

    def _save_pending(self) -> None:
        path = self._state_path()
        if path is not None:
            filestore.write_atomically(path, json.dumps(self.pending, sort_keys=True).encode("utf-8"))
