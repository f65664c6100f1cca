"""A Spark standalone cluster on loopback whose executors' Python does not have changeflow.

The ``cluster`` fixture starts a Master and two Workers (one core each) with
the pip pyspark's ``bin/spark-class``, and a SparkSession on it. The
executors' Python is a venv made here whose only content is a ``.pth`` line
naming the test interpreter's site-packages: pandas, pyarrow and pyspark
import there, changeflow does not (a ``.pth`` line adds a directory without
running the ``.pth`` files in it, so the editable install's finder is not
installed, and the Workers run without PYTHONPATH). Only the zip changeflow
ships (runtime/spark/shipping.py) can give the executors changeflow.
Every process the fixture starts is stopped at the end, by its pid.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import site
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from dataclasses import dataclass

import pytest


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _executor_python(root: str) -> str:
    """A venv without changeflow: its site-packages holds one .pth line naming the test interpreter's."""
    venv = os.path.join(root, "executor-venv")
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", venv], check=True)
    python = os.path.join(venv, "bin", "python")
    venv_site = subprocess.run([python, "-c", "import site; print(site.getsitepackages()[0])"], check=True,
                               capture_output=True, text=True, env=_clean_env()).stdout.strip()
    with open(os.path.join(venv_site, "test-deps.pth"), "w") as f:
        f.write("\n".join(site.getsitepackages()) + "\n")
    probe = subprocess.run([python, "-c", "import pandas, pyarrow, pyspark\ntry:\n import changeflow\n"
                            " print('changeflow')\nexcept ImportError:\n print('none')"],
                           capture_output=True, text=True, env=_clean_env(), cwd=root)  # '' on sys.path: not the repo
    assert probe.stdout.strip() == "none", f"the executors' Python must lack changeflow: {probe.stdout}{probe.stderr}"
    return python


def _clean_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYSPARK_PYTHON", "PYSPARK_DRIVER_PYTHON")}
    env["SPARK_LOCAL_IP"] = "127.0.0.1"
    return env


def _wait_for_workers(ui_port: int, count: int, processes: list, limit_s: float = 120.0) -> None:
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        for p, log in processes:
            assert p.poll() is None, f"a cluster process exited: {_tail(log, 3000)}"
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{ui_port}/json/", timeout=2) as response:
                state = json.load(response)
            if sum(w.get("state") == "ALIVE" for w in state.get("workers", [])) >= count:
                return
        except OSError:
            pass
        time.sleep(0.5)
    raise AssertionError("the standalone cluster did not come up: "
                         + "\n".join(_tail(log, 2000) for _, log in processes))


def _tail(path: str, chars: int) -> str:
    with open(path) as f:
        return f.read()[-chars:]


def _stop(processes: list) -> None:
    """Stop the started processes by pid: TERM (a Worker then kills its executors), KILL when it lingers."""
    for p, _ in reversed(processes):
        if p.poll() is None:
            p.send_signal(signal.SIGTERM)
    for p, _ in reversed(processes):
        try:
            p.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)  # the group of the process started here (it leads it)
            p.wait()


@dataclass
class Cluster:
    spark: object
    root: str  # a temporary directory for the tests' files
    executors_had_changeflow_before_shipping: bool

    def executors_import_changeflow(self) -> bool:
        return _executors_import_changeflow(self.spark)


@pytest.fixture(scope="session")
def cluster():
    import pyspark

    root = tempfile.mkdtemp(prefix="changeflow-cluster-")
    python = _executor_python(root)
    spark_class = os.path.join(os.path.dirname(pyspark.__file__), "bin", "spark-class")
    env = _clean_env()
    env["SPARK_HOME"] = os.path.dirname(pyspark.__file__)
    port, ui = _free_port(), _free_port()
    processes: list = []

    def start(name: str, *args: str) -> None:
        log = os.path.join(root, f"{name}.log")
        with open(log, "w") as out:
            p = subprocess.Popen([spark_class, *args], env=env, stdout=out, stderr=subprocess.STDOUT,
                                 start_new_session=True)
        processes.append((p, log))

    spark = None
    try:
        start("master", "org.apache.spark.deploy.master.Master", "--host", "127.0.0.1", "--port", str(port),
              "--webui-port", str(ui))
        for i in range(2):
            work = os.path.join(root, f"worker-{i}")
            start(f"worker-{i}", "org.apache.spark.deploy.worker.Worker", f"spark://127.0.0.1:{port}",
                  "--cores", "1", "--memory", "1g", "--host", "127.0.0.1", "--webui-port", str(_free_port()),
                  "--work-dir", work)
        _wait_for_workers(ui, 2, processes)

        from changeflow.runtime.spark import session

        # The driver's Python workers and the executors' both run the venv without changeflow.
        os.environ["PYSPARK_PYTHON"] = python
        spark = session.get_or_create(f"spark://127.0.0.1:{port}", {
            "spark.pyspark.python": python,
            "spark.executorEnv.PYSPARK_PYTHON": python,
            "spark.driver.host": "127.0.0.1",
            "spark.driver.bindAddress": "127.0.0.1",
            "spark.executor.memory": "768m",
            "spark.executor.cores": "1",
            "spark.cores.max": "2",
            "spark.sql.shuffle.partitions": "2",
            # The quick JIT compiler only, as every test JVM (tests/conftest.py's TEST_JVM_OPTIONS).
            "spark.executor.extraJavaOptions": os.environ.get("SPARK_SUBMIT_OPTS", ""),
        }, ship_package=False)  # shipped by the first environment given this session
        before = _executors_import_changeflow(spark)
        yield Cluster(spark, root, before)
    finally:
        if spark is not None:
            spark.stop()
        _stop(processes)
        shutil.rmtree(root, ignore_errors=True)  # the venv, the Workers' directories, the tests' files


def _executors_import_changeflow(spark) -> bool:
    """Whether a task on the executors can import changeflow."""
    def probe(_):
        try:
            import changeflow  # noqa: F401
            return [True]
        except ImportError:
            return [False]

    return all(spark.sparkContext.parallelize(range(2), 2).mapPartitions(probe).collect())

