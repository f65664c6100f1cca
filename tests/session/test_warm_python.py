"""The fork server and launcher a local changeflow session gives Spark as its Python (runtime/spark/warm_python.py).

Spark runs its Python as ``<python> -m <module>`` and expects that process to behave as a new interpreter
would: the launcher's arguments, environment, working directory, standard streams, exit status and signals
must reach the forked child and come back. No Spark here: the launcher runs small modules of the standard
library, and a module of this directory that reports what it sees.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from changeflow.runtime.spark import warm_python

pytestmark = pytest.mark.skipif(os.name != "posix", reason="fork and Unix sockets")

PROBE = """
import json, os, sys
print(json.dumps({"argv": sys.argv[1:], "x": os.environ.get("X"), "cwd": os.getcwd(), "path": sys.path[:3],
                  "stdin": sys.stdin.read(), "pandas": "pandas" in sys.modules, "pid": os.getpid()}))
print("to stderr", file=sys.stderr)
sys.exit(int(os.environ.get("EXIT", "0")))
"""


@pytest.fixture(scope="module")
def launcher(tmp_path_factory):
    directory = tmp_path_factory.mktemp("warm")
    path = warm_python.start(str(directory))
    deadline = time.monotonic() + 120  # the server imports pyspark and pandas first (seconds on a loaded machine)
    while not os.path.exists(directory / "fork-server.sock"):
        assert time.monotonic() < deadline, "the fork server did not start listening"
        time.sleep(0.1)
    modules = tmp_path_factory.mktemp("modules")
    (modules / "warm_probe.py").write_text(PROBE)
    yield path, str(modules)
    server = warm_python._servers.pop(path)
    server.stdin.close()  # as when the driver ends
    assert server.wait(30) == 0
    assert not os.path.exists(directory / "fork-server.sock")


def run(launcher, *args, env=None, **kwargs):
    path, modules = launcher
    environment = {**os.environ, "PYTHONPATH": modules, **(env or {})}
    return subprocess.run([path, *args], capture_output=True, text=True, env=environment, timeout=120, **kwargs)


def test_a_module_runs_in_a_forked_child_with_the_launchers_arguments_environment_and_streams(launcher, tmp_path):
    done = run(launcher, "-m", "warm_probe", "a", "b", env={"X": "given", "EXIT": "3"}, cwd=tmp_path, input="in")
    assert done.returncode == 3
    seen = json.loads(done.stdout)
    assert seen["argv"] == ["a", "b"] and seen["x"] == "given" and seen["stdin"] == "in"
    assert seen["cwd"] == str(tmp_path)
    assert seen["path"][:2] == [str(tmp_path), launcher[1]]  # as `python -m`: the directory, then PYTHONPATH
    assert seen["pandas"]  # forked from the server, which imported it: no import paid here
    assert done.stderr == "to stderr\n"


def test_anything_but_a_module_runs_the_real_interpreter(launcher):
    done = run(launcher, "-c", "import sys; print(sys.executable, 'pandas' in sys.modules)")
    assert done.returncode == 0
    assert done.stdout.split() == [sys.executable, "False"]


def test_without_its_server_the_launcher_runs_the_real_interpreter(tmp_path):
    code = tmp_path / "launcher.py"
    code.write_text(warm_python.LAUNCHER.format(socket=str(tmp_path / "none.sock"), python=sys.executable))
    done = subprocess.run([sys.executable, "-I", "-S", str(code), "-m", "json.tool"], input='{"a": 1}',
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and json.loads(done.stdout) == {"a": 1}


def test_a_signal_to_the_launcher_reaches_the_child_and_its_status_comes_back(launcher):
    path, modules = launcher
    process = subprocess.Popen([path, "-m", "http.server", "0", "--bind", "127.0.0.1"], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, env={**os.environ, "PYTHONPATH": modules})
    time.sleep(2)
    process.terminate()
    assert process.wait(60) == -signal.SIGTERM


def test_a_killed_launcher_takes_its_child_with_it(launcher, tmp_path):
    path, modules = launcher
    pid_file = tmp_path / "pid"
    code = f"import os, time; open({str(pid_file)!r}, 'w').write(str(os.getpid())); time.sleep(600)"
    (tmp_path / "sleeper.py").write_text(code)
    process = subprocess.Popen([path, "-m", "sleeper"], cwd=tmp_path, env={**os.environ, "PYTHONPATH": modules})
    deadline = time.monotonic() + 60
    while not pid_file.exists() or not pid_file.read_text():
        assert time.monotonic() < deadline
        time.sleep(0.1)
    child = int(pid_file.read_text())
    assert child != process.pid
    process.kill()  # SIGKILL: the launcher cannot pass it on; the server sees its connection close
    process.wait(30)
    deadline = time.monotonic() + 30
    while _alive(child):
        assert time.monotonic() < deadline, "the child outlived its launcher"
        time.sleep(0.1)


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def test_only_a_local_session_on_this_interpreter_gets_the_launcher():
    assert warm_python.enabled("local[2]", None)
    assert warm_python.enabled("local", sys.executable)
    assert not warm_python.enabled("local[2]", "/usr/bin/python3.9")  # PYSPARK_PYTHON names another Python
    assert not warm_python.enabled("spark://host:7077", None)  # executors may not see the driver's disk
    assert not warm_python.enabled("local-cluster[2,1,1024]", None)  # executors: processes of their own
