"""The Python a local changeflow session's workers run: this interpreter, importing pyspark
from its installed package (compiled bytecode) rather than from ``pyspark.zip``.

Spark puts ``$SPARK_HOME/python/lib/pyspark.zip`` and py4j's source zip first on the
``PYTHONPATH`` of every Python process it starts. For a pip-installed pyspark, SPARK_HOME
is the package itself: the zip holds the very modules the package holds, but no bytecode,
so every Python worker compiles pyspark from source as it starts (1.3-1.5 CPU seconds
here, against 0.3 importing the installed package). Spark gives the Python process that a
``transformWithState`` operator starts on the driver at a query's first micro-batch a
fixed 10 s to connect back; on a loaded 2-core machine (load average 20) that compile alone
took 11-20 s, and every stateful query failed with "Python worker failed to connect back",
also after the restarts of :mod:`.query_start`.

:func:`launcher` writes a small shell script into this process's temp directory
(:mod:`.temp_root`) that drops exactly those two zips from ``PYTHONPATH`` (only when the
installed packages are the same release: the package's own zip, py4j of the zip's
version) and executes this interpreter. A session changeflow starts on a local master
uses it as ``PYSPARK_PYTHON`` unless the user set one.
"""

from __future__ import annotations

import os
import shlex
import sys

from changeflow.runtime.spark import temp_root

NAME = "python-worker"


def redundant_zips() -> list[str]:
    """The ``PYTHONPATH`` entries Spark adds for a pip-installed pyspark that the installed
    packages make redundant: the package's ``pyspark.zip``, and py4j's zip if the installed
    py4j has the zip's version."""
    import pyspark
    from py4j.version import __version__ as py4j_version

    if pyspark.__file__ is None:  # not a package on disk: nothing of it to compare the zips with
        return []
    lib = os.path.join(os.path.dirname(os.path.abspath(pyspark.__file__)), "python", "lib")
    out = [os.path.join(lib, "pyspark.zip"), os.path.join(lib, f"py4j-{py4j_version}-src.zip")]
    return [p for p in out if os.path.exists(p)]


def script(python: str, drop: list[str]) -> str:
    """The launcher's text: ``PYTHONPATH`` without the entries ``drop``, then ``exec python``."""
    patterns = "|".join(shlex.quote(p) for p in drop) or "''"
    return (
        "#!/bin/sh\n"
        "# changeflow: Spark's Python worker without pyspark.zip on PYTHONPATH "
        "(the installed package has compiled bytecode)\n"
        "set -f\n"  # entries are paths, not glob patterns
        "kept=''\n"
        "IFS=:\n"
        "for entry in $PYTHONPATH; do\n"
        f"  case \"$entry\" in {patterns}) ;; *) kept=\"${{kept:+$kept:}}$entry\" ;; esac\n"
        "done\n"
        "unset IFS\n"
        "export PYTHONPATH=\"$kept\"\n"
        f"exec {shlex.quote(python)} \"$@\"\n")


def launcher() -> str:
    """The launcher's path (written on first use), or this interpreter where there is nothing to drop
    or no POSIX shell."""
    drop = redundant_zips() if os.name == "posix" else []
    if not drop:
        return sys.executable
    path = os.path.join(temp_root.process_dir(), NAME)
    text = script(sys.executable, drop)
    if _read(path) != text:
        tmp = f"{path}.{os.getpid()}.tmp"
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(text)
        os.chmod(tmp, 0o755)
        os.replace(tmp, path)
    return path


def _read(path: str) -> str | None:
    try:
        with open(path, encoding="utf-8") as f:
            return f.read()
    except OSError:
        return None
