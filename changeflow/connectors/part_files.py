"""The part files of one directory a ``filesystem`` sink writes (the table's path, or one of its partitions).

A file is named ``part-<sequence>-<writer>-<batch>``: the sequence (20 digits, so
that name order is write order) is one more than the directory's highest, whichever
job wrote it; the writer is the job's id, kept in its checkpoint, and the batch its
micro-batch id. A file is written under a hidden name and renamed, so a reader never
sees half a file; a micro-batch that a restarted job runs again replaces its own
earlier file in the directory, keeping its sequence (:mod:`.filesystem` says why).
"""

from __future__ import annotations

import re

from changeflow.connectors import filestore

# part-<sequence>-<writer>-<batch>: the names a sink gives its files.
PART = re.compile(r"^part-(\d{20})-([0-9a-f]+)-(\d+)$")


class PartDirectory:
    """One directory's part files: publishes new ones, replaces a re-run batch's, remembers this writer's."""

    def __init__(self, path: str) -> None:
        self.path = path
        self._next_sequence: int | None = None  # re-read from the directory when another writer took one
        self._written: dict[int, str] | None = None  # this writer's batch id -> its file name
        self._last_mtime_ms: int | None = None  # of the last file published here

    def forget(self) -> None:
        """Read this writer's files from the directory again (a job (re)opens the sink)."""
        self._written = None

    def write(self, data: bytes | None, writer: str, batch_id: int | None) -> None:
        """Write one batch's file; a batch id this writer wrote before replaces that file (None: a new batch id).

        ``data`` None (no rows) writes nothing, and removes the batch's earlier file if a first attempt wrote one.
        """
        store = filestore.store_for(self.path)  # a local path or a Hadoop URI (hdfs://, file://, ...)
        written = self.files_of(writer)
        if batch_id is None:
            batch_id = max(written, default=-1) + 1
        earlier = written.get(batch_id)
        if data is None:
            if earlier is not None:  # the batch ran again and now writes nothing: its first attempt goes
                store.delete(filestore.join(self.path, earlier))
                del written[batch_id]
            return
        store.makedirs(self.path)
        hidden = filestore.join(self.path, f".part-{writer}-{batch_id}.inprogress")
        store.write_bytes(hidden, data)
        if earlier is not None:
            store.replace(hidden, filestore.join(self.path, earlier))
            return
        written[batch_id] = self._publish(hidden, writer, batch_id)

    def files_of(self, writer: str) -> dict[int, str]:
        """This writer's files here by batch id (listed once, then kept up to date)."""
        if self._written is None:
            self._written = {}
            for name in listing(self.path):
                part = PART.match(name)
                if part and part.group(2) == writer:
                    self._written[int(part.group(3))] = name
        return self._written

    def _publish(self, hidden: str, writer: str, batch_id: int) -> str:
        """Give the written file the next sequence number; a hard link claims it atomically.

        Another job writing the same directory may take a number first: the link
        (the store's ``publish``) then fails and the directory is read again for the next free one.
        """
        store = filestore.store_for(self.path)
        while True:
            if self._next_sequence is None:
                parts = sorted((int(m.group(1)), m.group(0)) for m in map(PART.match, listing(self.path)) if m)
                self._next_sequence = parts[-1][0] + 1 if parts else 0
                if parts:  # the newest file, perhaps another job's: ours come after it
                    last = store.modified_ms(filestore.join(self.path, parts[-1][1]))
                    self._last_mtime_ms = max(self._last_mtime_ms or 0, last)
            name = f"part-{self._next_sequence:020d}-{writer}-{batch_id}"
            if not store.publish(hidden, filestore.join(self.path, name)):
                self._next_sequence = None
                continue
            self._next_sequence += 1
            self._order_modification_time(name)
            return name

    def _order_modification_time(self, name: str) -> None:
        """Give the new file a modification time after its predecessor's, to the millisecond.

        A monitored directory (Spark's file stream, changeflow's unbounded
        filesystem source) picks files up oldest first by modification time;
        two files written within one millisecond would otherwise tie, and a
        tie is broken by the listing's order, which a local disk does not sort.
        """
        path = filestore.join(self.path, name)
        store = filestore.store_for(path)
        mtime_ms = store.modified_ms(path)
        if self._last_mtime_ms is not None and mtime_ms < self._last_mtime_ms + 1:
            mtime_ms = self._last_mtime_ms + 1
            store.set_modified_ms(path, mtime_ms)
        self._last_mtime_ms = mtime_ms



def listing(path: str) -> list[str]:
    """The entry names of directory ``path`` ([] when it does not exist)."""
    return [name for name, _ in filestore.store_for(path).entries(path)]
