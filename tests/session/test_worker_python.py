"""The Python workers of a local session import pyspark's installed package, not pyspark.zip.

Spark puts pyspark.zip (no bytecode: compiled at every worker start) first on a worker's
PYTHONPATH; on a loaded machine the driver-side worker of a stateful query then missed
Spark's fixed 10 s to connect back. The launcher drops the zips and runs this interpreter.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

pytest.importorskip("pyspark")

from changeflow.runtime.spark import worker_python  # noqa: E402

pytestmark = pytest.mark.skipif(os.name != "posix", reason="the launcher is a POSIX shell script")


def run(launcher: str, pythonpath: str, code: str) -> list[str]:
    env = {**os.environ, "PYTHONPATH": pythonpath}
    done = subprocess.run([launcher, "-c", code], env=env, capture_output=True, text=True, check=True)
    return done.stdout.splitlines()


def test_the_zips_spark_adds_are_the_installed_packages_own():
    import pyspark

    zips = worker_python.redundant_zips()
    assert [os.path.basename(z) for z in zips][:1] == ["pyspark.zip"]
    assert all(z.startswith(os.path.dirname(pyspark.__file__)) for z in zips)


def test_launcher_drops_the_zips_keeps_other_entries_and_imports_the_installed_pyspark(tmp_path):
    import pyspark

    zips = worker_python.redundant_zips()
    other = str(tmp_path / "a dir with a space*")  # kept verbatim: no word splitting, no globbing
    pythonpath = os.pathsep.join([*zips, other, "/some/jar.jar"])
    launcher = worker_python.launcher()
    assert launcher != sys.executable and os.access(launcher, os.X_OK)
    lines = run(launcher, pythonpath, "import os, sys, pyspark; print(os.environ['PYTHONPATH']); "
                                      "print(pyspark.__file__); print(sys.executable)")
    assert lines == [os.pathsep.join([other, "/some/jar.jar"]), pyspark.__file__, sys.executable]


def test_arguments_pass_through_unchanged():
    launcher = worker_python.launcher()
    lines = run(launcher, "", "import sys; print(sys.argv[1:])")
    assert lines == ["[]"]
    env = {**os.environ, "PYTHONPATH": ""}
    done = subprocess.run([launcher, "-c", "import sys; print(sys.argv[1:])", "a b", "*", ""],
                          env=env, capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "['a b', '*', '']"


def test_the_session_runs_its_workers_through_the_launcher(spark):
    # the session fixture's JVM was started by changeflow, on a local master: unless the user set
    # PYSPARK_PYTHON, its workers' Python is the launcher
    exec_ = spark.sparkContext.pythonExec
    if os.path.basename(exec_) != worker_python.NAME:
        pytest.skip(f"PYSPARK_PYTHON was set outside changeflow ({exec_})")
    # a Python worker starts and imports pyspark from the installed package
    paths = spark.sparkContext.parallelize([0], 1).map(lambda _: __import__("pyspark").__file__).collect()
    import pyspark

    assert paths == [pyspark.__file__]
