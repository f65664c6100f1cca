"""One temp root for what changeflow's own Spark sessions leave on local disk, and its clean-up.

A local JVM extracts native libraries (RocksDB's ~15 MB, lz4, snappy, zstd)
into ``java.io.tmpdir`` and Spark keeps block-manager, shuffle, artifact and
fault-handler directories under ``spark.local.dir``; both default to the
system temp directory, and a process that crashes (or is killed) leaves them
behind: 90-134 MB after 15 crashed runs. A session changeflow starts itself
(:func:`changeflow.runtime.spark.session.get_or_create`, local master) puts
them, and changeflow's own temporary job directories, into a directory of its
process under one root::

    <system temp>/changeflow-tmp/<pid>-<start>/   owner file: "pid start-time"

On start, every directory under the root whose owner process is gone (no such
pid, or a pid reused by a later process: the start time differs) is removed.
Nothing else is touched: only directories holding changeflow's owner file,
directly under changeflow's root. A session the user passes in keeps the
user's settings.
"""

from __future__ import annotations

import os
import shutil
import tempfile

ROOT_ENV = "CHANGEFLOW_TMP_ROOT"  # moves the root (tests, or a disk with more room)
OWNER = ".changeflow-owner"
_process_dir: str | None = None


def root() -> str:
    return os.environ.get(ROOT_ENV) or os.path.join(tempfile.gettempdir(), "changeflow-tmp")


def start_time(pid: int) -> str | None:
    """The process's start time (clock ticks since boot, from /proc), '' where /proc is missing, None if gone."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            stat = f.read()
    except FileNotFoundError:
        return None
    except OSError:
        return ""
    # Field 22, counted after the command name (which may hold spaces) in parentheses.
    return stat.rsplit(")", 1)[1].split()[19]


def alive(pid: int, started: str) -> bool:
    """Whether the process that wrote an owner file (``pid``, ``started``) still runs."""
    if not os.path.isdir("/proc"):  # no /proc: ask the OS whether the pid exists at all
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            return True
        return True
    now = start_time(pid)
    return now is not None and (not started or not now or now == started)


def process_dir() -> str:
    """This process's directory under the root (created, with its owner file, on first use)."""
    global _process_dir
    if _process_dir is None or not os.path.isdir(_process_dir):
        pid = os.getpid()
        started = start_time(pid) or ""
        path = os.path.join(root(), f"{pid}-{started or 'x'}")
        os.makedirs(path, exist_ok=True)
        with open(os.path.join(path, OWNER), "w") as f:
            f.write(f"{pid} {started}\n")
        _process_dir = path
    return _process_dir


def clean_dead() -> list[str]:
    """Remove the directories under the root whose owner process is gone; the paths removed."""
    base = root()
    removed = []
    try:
        names = os.listdir(base)
    except FileNotFoundError:
        return removed
    for name in names:
        path = os.path.join(base, name)
        owner = _read_owner(os.path.join(path, OWNER))
        if owner is None or os.path.islink(path):
            continue  # not changeflow's (or unreadable): never touched
        pid, started = owner
        if pid == os.getpid() or alive(pid, started):
            continue
        shutil.rmtree(path, ignore_errors=True)
        removed.append(path)
    return removed


def _read_owner(path: str) -> tuple[int, str] | None:
    try:
        with open(path) as f:
            fields = f.read().split()
        return int(fields[0]), fields[1] if len(fields) > 1 else ""
    except (OSError, ValueError, IndexError):
        return None


def session_settings(extra_java_options: str | None) -> dict[str, str]:
    """The Spark settings that put a local session's JVM temp files under this process's directory.

    Spark's own directories follow ``SPARK_LOCAL_DIRS``, set here for the JVM about to start
    (unless the environment has it): the ``spark.local.dir`` setting would do the same but makes
    Spark warn at every start that a cluster manager overrides it.
    """
    path = process_dir()
    local, java = os.path.join(path, "spark-local"), os.path.join(path, "java-tmp")
    os.makedirs(local, exist_ok=True)
    os.makedirs(java, exist_ok=True)
    os.environ.setdefault("SPARK_LOCAL_DIRS", local)
    options = f"-Djava.io.tmpdir={java}"
    return {"spark.driver.extraJavaOptions": f"{extra_java_options} {options}" if extra_java_options else options}
