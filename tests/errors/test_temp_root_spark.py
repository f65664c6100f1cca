"""A hard crash's temp files (RocksDB's native library & co) land under changeflow's root; the next start removes them.

Two fresh Python processes, each with its own JVM (the shared test session cannot crash).
"""

import os
import subprocess
import sys
import textwrap

import pytest

pytestmark = pytest.mark.spark  # Spark in child processes: no fixture to mark it by

CRASH = textwrap.dedent("""
    import os, signal
    from changeflow.runtime.spark import session
    spark = session.get_or_create("local[1]")
    # What a stateful query's first RocksDB state store does (its native library extracted to the JVM's
    # temp directory), without a query: starting one took most of this test's time.
    spark.sparkContext._jvm.org.apache.spark.sql.execution.streaming.state.RocksDBLoader.loadLibrary()
    os.kill(spark.sparkContext._jvm.java.lang.ProcessHandle.current().pid(), signal.SIGKILL)  # JVM and driver die
    os.kill(os.getpid(), signal.SIGKILL)
""")
START = "from changeflow.runtime.spark import session; session.get_or_create('local[1]')"


def run(code: str, root) -> None:
    repo = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env = dict(os.environ, CHANGEFLOW_TMP_ROOT=str(root), PYTHONPATH=repo)
    env.pop("SPARK_LOCAL_DIRS", None)
    subprocess.run([sys.executable, "-c", code], env=env, cwd=repo, capture_output=True, timeout=600)


def test_a_crashed_runs_temp_files_are_removed_by_the_next_start(tmp_path):
    pytest.importorskip("pyspark")
    root = tmp_path / "changeflow-tmp"
    run(CRASH, root)
    (crashed,) = os.listdir(root)
    left = [name for _, _, names in os.walk(root / crashed) for name in names]
    assert any(name.startswith("librocksdbjni") for name in left), left
    run(START, root)
    assert crashed not in os.listdir(root)  # only the new process's own directory is left
    assert len(os.listdir(root)) == 1
