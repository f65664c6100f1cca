"""Making a SparkSession ready for changeflow beyond the driver: the package on the executors, Hadoop paths.

Stateful operators and UDFs run changeflow's code in the executors' Python
workers (``import changeflow.kernels...``). On a cluster whose Python
environment does not have changeflow every streaming step would fail with
``No module named 'changeflow'``, so when the master is not ``local[...]``
changeflow ships itself, as a PySpark user ships a job's code: a zip of the
package the driver imported, built once per process and added with
``SparkContext.addPyFile``. Spark puts shipped files ahead of site-packages in
the workers' path, so the driver's version is the one that runs even where
another changeflow is installed. ``changeflow.ship-package = false`` turns it
off (the executors' environment then provides changeflow).

Only changeflow is shipped: it is pure Python. Its third-party imports on the
executors (pandas, pyarrow, numpy, protobuf and grpcio for Spark's state API,
and pyspark itself) are the executors' environment's job, as for any PySpark job.
"""

from __future__ import annotations

import atexit
import hashlib
import os
import shutil
import tempfile
import threading
import zipfile

from pyspark.sql import SparkSession

import changeflow
from changeflow.runtime.spark.connectors import hadoop_store

_lock = threading.Lock()
_zip: str | None = None  # the package zip of this process
_shipped: set[str] = set()  # application ids of the SparkContexts the zip was added to


def master_url(context) -> str:
    """The master URL of a running SparkContext (Spark starts none without one)."""
    if context.master is None:
        raise RuntimeError("the SparkContext has no master URL")
    return context.master


def is_local_master(master: str) -> bool:
    """True for ``local`` and ``local[...]``: executors are threads of the driver's process.

    >>> [is_local_master(m) for m in ("local", "local[*]", "local-cluster[2,1,1024]", "spark://h:7077", "yarn")]
    [True, True, False, False, False]
    """
    return master == "local" or master.startswith("local[")


def shares_driver_disk(master: str) -> bool:
    """True where every executor runs on the driver's machine (``local[...]``, ``local-cluster[...]``)."""
    return master.startswith("local")


def prepare(session: SparkSession, ship_package: bool = True) -> None:
    """Register the session's Hadoop file store and, off ``local[...]``, ship the package (once per context)."""
    hadoop_store.register(session)
    context = session.sparkContext
    if not ship_package or is_local_master(master_url(context)):
        return
    with _lock:
        app = context.applicationId
        if app in _shipped:
            return
        context.addPyFile(package_zip())
        _shipped.add(app)


def package_zip() -> str:
    """A zip of the imported ``changeflow`` package (its ``.py`` files and data), built once per process."""
    global _zip
    if _zip is not None and os.path.exists(_zip):
        return _zip
    root = os.path.dirname(os.path.abspath(changeflow.__file__))
    files = []
    for directory, dirs, names in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        files.extend(os.path.join(directory, n) for n in sorted(names) if not n.endswith((".pyc", ".pyo")))
    digest = hashlib.sha1()
    for path in files:
        digest.update(os.path.relpath(path, root).encode())
        with open(path, "rb") as f:
            digest.update(f.read())
    # The name carries the content's digest: Spark refuses a second file of one name with other content.
    folder = tempfile.mkdtemp(prefix="changeflow-ship-")
    atexit.register(shutil.rmtree, folder, True)
    path = os.path.join(folder, f"changeflow-{digest.hexdigest()[:12]}.zip")
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for file in files:
            archive.write(file, os.path.join("changeflow", os.path.relpath(file, root)))
        # zipimport finds no namespace packages (changeflow/plan, changeflow/runtime/spark have no
        # __init__.py): an empty one makes each directory of modules a package inside the zip.
        packages = {os.path.dirname(os.path.relpath(f, root)) for f in files if f.endswith(".py")}
        for package in sorted(packages):
            if not os.path.exists(os.path.join(root, package, "__init__.py")):
                archive.writestr(os.path.join("changeflow", package, "__init__.py"), "")
    _zip = path
    return path
