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
import shutil
import tempfile
from contextlib import contextmanager
from typing import Iterator

from changeflow.runtime.spark import temp_root

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
    """The job's working directory: kept under ``checkpoint_root`` for a named job, else temporary."""
    if checkpoint_root is not None and job_name is not None:
        path = os.path.join(checkpoint_root, directory_name(job_name))
        os.makedirs(path, exist_ok=True)
        yield path
        return
    path = temporary_directory(checkpoint_root, prefix)
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


def temporary_directory(checkpoint_root: str | None, prefix: str = "changeflow-") -> str:
    """A new directory below ``checkpoint_root`` (created if missing), or below this process's directory of
    changeflow's temp root (:mod:`.temp_root`: left behind by a crash, it is removed by a later run)."""
    if checkpoint_root is not None:
        os.makedirs(checkpoint_root, exist_ok=True)
    return tempfile.mkdtemp(prefix=prefix, dir=checkpoint_root or temp_root.process_dir())


def already_written(directory: str) -> bool:
    """True when a resumed job finds its bounded source's files from an earlier run.

    They must be kept as they are: the checkpoint's file-source log names the
    files already read, and rewritten files (Spark names its part files with a
    random id) would be read a second time.
    """
    return os.path.isdir(directory) and any(n.endswith(".parquet") for n in os.listdir(directory))
