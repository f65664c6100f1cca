"""The cluster suite (tests/cluster/cases) in a child pytest process: a standalone Master, two Workers.

The cases need a SparkContext on the cluster, and one Python process holds one
SparkContext (this run's is the shared local session of tests/conftest.py), so
they run in a process of their own; this test passes when they all pass.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

import changeflow

pytestmark = pytest.mark.cluster

CASES = os.path.join(os.path.dirname(__file__), "cases")


def test_cluster_suite_passes():
    repo = os.path.dirname(os.path.dirname(os.path.abspath(changeflow.__file__)))
    env = dict(os.environ, CHANGEFLOW_CLUSTER_CASES="1", PYTHONPATH=repo)  # the driver imports this changeflow
    env.pop("PYSPARK_PYTHON", None)
    result = subprocess.run([sys.executable, "-m", "pytest", CASES, "-p", "no:cacheprovider", "-q", "-x",
                             "-o", "addopts=", "-m", "cluster"],
                            cwd=os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                            env=env, capture_output=True, text=True, timeout=900)
    assert result.returncode == 0, f"the cluster suite failed:\n{result.stdout}\n{result.stderr}"
