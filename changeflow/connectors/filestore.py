"""Where changeflow reads and writes files on the driver: a local disk or a Hadoop filesystem.

Paths changeflow takes (``changeflow.checkpoint-dir``, a filesystem table's
``path``) are local paths or Hadoop URIs: ``file:///data/t``, ``hdfs://nn/t``,
``s3a://bucket/t``. Spark reads and writes all of them itself; the few file
operations changeflow does on the driver (a job's directory, the filesystem
sink's part files, the bookkeeping files of a resumable job, staged Parquet
files of a bounded source, flush signals) go through a :class:`FileStore`:

* a local path or a ``file:`` URI: :class:`LocalFileStore` (``os``);
* any other scheme: the store the runtime registered for it
  (:func:`register_scheme`). The Spark runtime registers one over the JVM's
  Hadoop ``FileSystem`` (``changeflow.runtime.spark.connectors.hadoop_store``) when it
  is given a session, so every scheme Spark is configured for works.

Paths keep the form they were given in: a store takes and returns the same
spelling (a URI stays a URI), so a path changeflow builds with :func:`join`
can be handed to Spark as it is.

>>> store = store_for("file:///tmp")
>>> isinstance(store, LocalFileStore), local_path("file:///tmp/a"), local_path("file:/tmp/a")
(True, '/tmp/a', '/tmp/a')
>>> join("hdfs://nn:8020/ck", "job", "checkpoint")
'hdfs://nn:8020/ck/job/checkpoint'

Before the runtime registers a store for a scheme, a path of that scheme fails
naming it: ``No file store for scheme 'hdfs' of path 'hdfs://nn/t'``.
"""

from __future__ import annotations

import os
import posixpath
import re
import shutil
from typing import Any, Callable, Iterator, Protocol

_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*):")


class FileStore(Protocol):
    """The file operations changeflow does on the driver; paths are in the store's own spelling."""

    def exists(self, path: str) -> bool: ...

    def is_dir(self, path: str) -> bool: ...

    def makedirs(self, path: str) -> None:
        """Create ``path`` and its parents; nothing when it exists."""

    def entries(self, path: str) -> list[tuple[str, bool]]:
        """``(name, is_directory)`` of each entry of directory ``path``; [] when it does not exist."""
        ...

    def read_bytes(self, path: str) -> bytes: ...

    def write_bytes(self, path: str, data: bytes) -> None:
        """Create or overwrite file ``path`` with ``data`` (not atomically: write a hidden name, then rename)."""

    def replace(self, source: str, target: str) -> None:
        """Rename ``source`` to ``target``, replacing a file ``target``."""

    def publish(self, source: str, target: str) -> bool:
        """Rename ``source`` to ``target`` unless ``target`` exists (then False, ``source`` kept)."""
        ...

    def delete(self, path: str, recursive: bool = False) -> None:
        """Remove a file (or, with ``recursive``, a directory tree); nothing when it does not exist."""

    def modified_ms(self, path: str) -> int: ...

    def set_modified_ms(self, path: str, ms: int) -> None:
        """Set the modification time (a no-op on stores that cannot, such as S3)."""


def scheme(path: str) -> str:
    """The URI scheme of ``path`` in lower case, '' for a plain path.

    >>> scheme("/tmp/x"), scheme("file:///tmp/x"), scheme("S3A://b/k"), scheme("C:/x")
    ('', 'file', 's3a', '')
    """
    match = _SCHEME.match(path)
    # One letter is a Windows drive (C:/x), not a scheme.
    return match.group(1).lower() if match and len(match.group(1)) > 1 else ""


def is_local(path: str) -> bool:
    """Whether ``path`` names the driver's local disk (a plain path or a ``file:`` URI)."""
    return scheme(path) in ("", "file")


def local_path(path: str) -> str:
    """The local path a plain path or ``file:`` URI names (``file:///a``, ``file:/a``, ``file://localhost/a``)."""
    if scheme(path) != "file":
        return path
    rest = path[len("file:"):]
    if rest.startswith("//"):
        authority, slash, tail = rest[2:].partition("/")
        if authority not in ("", "localhost"):
            raise ValueError(f"file URI '{path}' names host '{authority}': only the local host is supported")
        rest = "/" + tail
    return rest


def join(base: str, *parts: str) -> str:
    """``base`` and ``parts`` joined with ``/``, keeping a URI's scheme and authority."""
    return posixpath.join(base, *parts) if scheme(base) else os.path.join(base, *parts)


def parent(path: str) -> str:
    return posixpath.dirname(path.rstrip("/")) if scheme(path) else os.path.dirname(path)


def basename(path: str) -> str:
    return posixpath.basename(path.rstrip("/"))


class LocalFileStore:
    """The driver's local disk through ``os``; takes plain paths and ``file:`` URIs."""

    def exists(self, path: str) -> bool:
        return os.path.exists(local_path(path))

    def is_dir(self, path: str) -> bool:
        return os.path.isdir(local_path(path))

    def makedirs(self, path: str) -> None:
        os.makedirs(local_path(path), exist_ok=True)

    def entries(self, path: str) -> list[tuple[str, bool]]:
        local = local_path(path)
        if not os.path.isdir(local):
            return []
        return [(e.name, e.is_dir()) for e in os.scandir(local)]

    def read_bytes(self, path: str) -> bytes:
        with open(local_path(path), "rb") as f:
            return f.read()

    def write_bytes(self, path: str, data: bytes) -> None:
        with open(local_path(path), "wb") as f:
            f.write(data)

    def replace(self, source: str, target: str) -> None:
        os.replace(local_path(source), local_path(target))

    def publish(self, source: str, target: str) -> bool:
        # A hard link fails when the target exists: two writers cannot both claim one name.
        try:
            os.link(local_path(source), local_path(target))
        except FileExistsError:
            return False
        os.remove(local_path(source))
        return True

    def delete(self, path: str, recursive: bool = False) -> None:
        local = local_path(path)
        if os.path.isdir(local) and not os.path.islink(local):
            if recursive:
                shutil.rmtree(local, ignore_errors=True)
            else:
                os.rmdir(local)
        elif os.path.lexists(local):
            os.remove(local)

    def modified_ms(self, path: str) -> int:
        return os.stat(local_path(path)).st_mtime_ns // 1_000_000

    def set_modified_ms(self, path: str, ms: int) -> None:
        os.utime(local_path(path), ns=(ms * 1_000_000, ms * 1_000_000))


LOCAL = LocalFileStore()
_stores: dict[str, Callable[[str], FileStore]] = {}


def register_scheme(name: str, factory: Callable[[str], FileStore] | None) -> None:
    """Serve paths of scheme ``name`` ('*': every non-local scheme) by ``factory(path)``; None unregisters."""
    if factory is None:
        _stores.pop(name, None)
    else:
        _stores[name] = factory


def store_for(path: str) -> FileStore:
    """The store of ``path``: local for a plain path or ``file:`` URI, else the one registered for its scheme."""
    name = scheme(path)
    factory = _stores.get(name)
    if factory is not None:
        return factory(path)
    if name in ("", "file"):
        return LOCAL
    factory = _stores.get("*")
    if factory is None:
        raise ValueError(f"No file store for scheme '{name}' of path '{path}': a Hadoop filesystem URI needs "
                         "the Spark runtime (an environment that has started or been given its SparkSession).")
    return factory(path)


def walk_files(path: str, keep: Callable[[str], bool], file_order: Callable[[str], Any],
               dir_order: Callable[[str], Any]) -> Iterator[str]:
    """The files below directory ``path`` whose names ``keep`` accepts: a directory's files (in
    ``file_order``), then its subdirectories (in ``dir_order``) one after another, as ``os.walk`` goes.

    Subdirectories whose names ``keep`` refuses are not entered.
    """
    store = store_for(path)
    entries = [(n, d) for n, d in store.entries(path) if keep(n)]
    for name in sorted((n for n, d in entries if not d), key=file_order):
        yield join(path, name)
    for name in sorted((n for n, d in entries if d), key=dir_order):
        yield from walk_files(join(path, name), keep, file_order, dir_order)


def write_atomically(path: str, data: bytes) -> None:
    """Write ``data`` to ``path`` under a hidden name and rename it: a reader sees all of it or nothing."""
    store = store_for(path)
    hidden = join(parent(path), f".{basename(path)}.tmp")
    store.write_bytes(hidden, data)
    store.replace(hidden, path)


def write_parquet(path: str, table) -> None:
    """Write the Arrow ``table`` as Parquet file ``path`` (straight to disk when local, else as bytes)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    store = store_for(path)
    if isinstance(store, LocalFileStore):
        pq.write_table(table, local_path(path))
        return
    buffer = pa.BufferOutputStream()
    pq.write_table(table, buffer)
    store.write_bytes(path, buffer.getvalue().to_pybytes())
