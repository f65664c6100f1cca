"""A Spark worker unpickles a DataStream job's functions in a fresh interpreter: each module must import first.

The runtime hands Spark functions defined in kernels (chains, window groups,
source encoders) and in runtime/spark; a worker imports the module of the
first one it unpickles before anything else, so an import cycle that a
driver never meets (it has loaded the API first) fails there.
"""

import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

FIRST_IMPORTS = [
    "changeflow.kernels.window.partitions",
    "changeflow.kernels.window.evaluate",
    "changeflow.kernels.chain",
    "changeflow.kernels.source_records",
    "changeflow.plan.stream_walks",
    "changeflow.plan.rules.end_of_stream",
    "changeflow.runtime.spark.stream_graph",
    "changeflow.runtime.spark.end_of_stream",
]


@pytest.mark.parametrize("module", FIRST_IMPORTS)
def test_module_imports_first_in_a_fresh_interpreter(module):
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    result = subprocess.run([sys.executable, "-c", f"import {module}"], env=env, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
