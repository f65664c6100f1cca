"""Where a streaming job keeps its checkpoint, and when a restarted job resumes from it.

A streaming job needs a directory for Spark's checkpoint (source offsets, state
stores, commits) and for the files its bounded sources are streamed from. Two
cases:

* ``changeflow.checkpoint-dir`` is set and the job has a name (an ``INSERT``
  job, named by ``pipeline.name`` or, as Flink names it, ``insert-into_<sink>``;
  a DataStream ``execute(job_name)``): the directory is ``<checkpoint-dir>/<name>``
  and outlives the job. Running the same job again resumes where it stopped:
  sources continue after the last committed micro-batch, and operator state
  (aggregates, buffered flush output, materializer histories) is restored. To
  start afresh, delete that directory or give the job another name.
* otherwise (no checkpoint directory, or an interactive ``SELECT`` /
  ``execute_and_collect``): a new temporary directory, removed when the job ends,
  so nothing resumes. Replaying an interactive query's result from the middle
  would show only the changes after the restart, which is not what a caller asks for.

>>> import tempfile, os
>>> root = tempfile.mkdtemp()
>>> with job_directory(root, "insert-into_db.orders") as path:
...     os.path.basename(path)
'insert-into_db.orders'
>>> os.path.isdir(os.path.join(root, "insert-into_db.orders"))  # kept for the next run
True
>>> with job_directory(None, "ignored") as path:
...     kept = path
>>> os.path.exists(kept)
False
"""

from __future__ import annotations

import hashlib
import os
import re
import tempfile
import uuid
from contextlib import contextmanager, suppress
from typing import Iterator

from changeflow.connectors import filestore
from changeflow.runtime.spark import temp_root
from changeflow.runtime.spark.shipping import shares_driver_disk

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]")


def directory_name(job_name: str) -> str:
    """A file-system-safe directory name for ``job_name``, distinct for distinct names.

    >>> directory_name("insert-into_default_catalog.default_database.snk")
    'insert-into_default_catalog.default_database.snk'
    >>> directory_name("my job/1")  # doctest: +ELLIPSIS
    'my_job_1-...'
    """
    safe = _UNSAFE.sub("_", job_name.strip()) or "job"
    if safe != job_name or safe in (".", ".."):
        # Two names may sanitize alike ("a b", "a/b"): a digest of the real name keeps them apart.
        safe = f"{safe}-{hashlib.sha1(job_name.encode()).hexdigest()[:8]}"
    return safe


@contextmanager
def job_directory(checkpoint_root: str | None, job_name: str | None, prefix: str = "changeflow-") -> Iterator[str]:
    """The job's working directory: kept under ``checkpoint_root`` for a named job, else temporary.

    ``checkpoint_root`` is a local path or a Hadoop URI (:mod:`changeflow.connectors.filestore`);
    the directory is spelt the same way, so Spark can be given it as it is.
    """
    if checkpoint_root is not None and job_name is not None:
        path = filestore.join(checkpoint_root, directory_name(job_name))
        filestore.store_for(path).makedirs(path)
        yield path
        return
    path = temporary_directory(checkpoint_root, prefix)
    try:
        yield path
    finally:
        remove_directory(path)


_driver_temporary: set[str] = set()  # temporary directories on the driver's disk (no checkpoint root)


def temporary_directory(checkpoint_root: str | None, prefix: str = "changeflow-") -> str:
    """A new directory below ``checkpoint_root`` (created if missing), or below this process's directory of
    changeflow's temp root (:mod:`.temp_root`: left behind by a crash, it is removed by a later run)."""
    if checkpoint_root is None:
        path = tempfile.mkdtemp(prefix=prefix, dir=temp_root.process_dir())
        _driver_temporary.add(path)
        return path
    if filestore.is_local(checkpoint_root):
        local_root = filestore.local_path(checkpoint_root)
        os.makedirs(local_root, exist_ok=True)
        return filestore.join(checkpoint_root, os.path.basename(tempfile.mkdtemp(prefix=prefix, dir=local_root)))
    path = filestore.join(checkpoint_root, prefix + uuid.uuid4().hex[:16])
    filestore.store_for(path).makedirs(path)
    return path


def remove_directory(path: str) -> None:
    """Remove a job's temporary directory and everything in it; a failure leaves it behind, unreported."""
    _driver_temporary.discard(path)
    # As rmtree(ignore_errors=True): a leftover directory is harmless.
    with suppress(Exception):
        filestore.store_for(path).delete(path, recursive=True)


def require_shared(master: str, directory: str, what: str) -> None:
    """Refuse to stage files executors must read in a directory on the driver's own disk.

    Without ``changeflow.checkpoint-dir`` a job's directory is a temporary one
    on the driver's machine; executors on other machines cannot read files
    there. ``local[...]`` and ``local-cluster[...]`` run every executor on the
    driver's machine, so any directory does.

    >>> d = temporary_directory(None)
    >>> require_shared("local[2]", d, "source x")
    >>> require_shared("spark://h:7077", filestore.join(d, "source-1"), "source x")
    Traceback (most recent call last):
    ...
    ValueError: source x is staged as files that the executors read, but this job's directory is a temporary directory
    on the driver's disk, which executors off the driver's machine cannot read (master spark://h:7077). Set
    changeflow.checkpoint-dir to storage every executor reads (an hdfs://, s3a:// or shared file:// URI).
    >>> remove_directory(d)
    """
    if shares_driver_disk(master):
        return
    if any(directory == d or directory.startswith(d.rstrip(os.sep) + os.sep) for d in _driver_temporary):
        raise ValueError(f"{what} is staged as files that the executors read, but this job's directory is a "
                         "temporary directory on the driver's disk, which executors off the driver's machine "
                         f"cannot read (master {master}). Set changeflow.checkpoint-dir to storage every executor "
                         "reads (an hdfs://, s3a:// or shared file:// URI).")


def committed_batches(workdir: str) -> list[int]:
    """The micro-batch ids Spark committed in the job's checkpoint (its ``commits`` log); [] for a new job.

    >>> import tempfile
    >>> d = tempfile.mkdtemp()
    >>> committed_batches(d)
    []
    >>> os.makedirs(os.path.join(d, "checkpoint", "commits"))
    >>> open(os.path.join(d, "checkpoint", "commits", "0"), "w").close()
    >>> committed_batches(d)
    [0]
    >>> committed_batches("file://" + d)
    [0]
    """
    commits = filestore.join(workdir, "checkpoint", "commits")
    return sorted(int(n) for n, is_dir in filestore.store_for(commits).entries(commits) if n.isdigit() and not is_dir)


def already_written(directory: str) -> bool:
    """True when a resumed job finds its bounded source's files from an earlier run.

    They must be kept as they are: the checkpoint's file-source log names the
    files already read, and rewritten files (Spark names its part files with a
    random id) would be read a second time.
    """
    return any(n.endswith(".parquet") for n, _ in filestore.store_for(directory).entries(directory))
