"""Python processes for a local Spark session forked from an interpreter that has already imported pyspark and pandas.

Spark starts its Python processes as ``<python> -m <module>``: at each streaming
query's start a process on the driver per ``transformWithStateInPandas`` operator
(only to learn its state variables), and the worker daemon the executors fork
their Python workers from. Each fresh interpreter spends most of its start
importing pyspark, pandas and pyarrow: 4-5 s of a query's ~8 s of planning on a
loaded 2-core machine (``docs/benchmarks.md``, "Time to first result").

A changeflow session on a ``local[...]`` master (executors are threads of the
driver's JVM, on the driver's machine) instead gives Spark a *launcher* as the
Python executable: a small script that asks this process's *fork server* for a
child. The server, started with the session, has imported those modules once; it
forks, and the child takes the launcher's standard streams, arguments, working
directory and environment and runs the module, as ``python -m`` would. The
launcher waits for the child, passes signals on to it and exits with its status,
so for Spark it is the process it started. Anything else the launcher is asked
to run (not ``-m``), or any request while the server is not up (still importing,
or gone), runs the real interpreter itself: never slower than before, never a
different result. A session off ``local[...]`` or a user's own session keeps its
Python executable (its executors may not see the driver's disk, or it is the
user's choice); ``changeflow.spark.warm-python = false`` turns it off.

The server runs no Python thread of its own (a fork while another Python thread
holds a lock would leave it held in the child); the native pools its imports
start (OpenBLAS's, pyarrow's jemalloc) reset themselves in a forked child, as
under multiprocessing's ``forkserver`` with preloaded modules. It reaps its
children, and ends when the driver's process does (its stdin, a pipe from the
driver, closes). A child shows the server's command line in ``ps``.
"""

from __future__ import annotations

import array
import contextlib
import importlib
import io
import json
import os
import pkgutil
import runpy
import selectors
import signal
import socket
import struct
import subprocess
import sys
import threading
import traceback
from typing import Any

from changeflow.runtime.spark import worker_python

# What the server imports before it forks anything: what Spark's Python processes import first, then
# changeflow's operator code and every kernel (a worker's first task unpickles its operator's kernel: ~1 s of
# imports per worker on a loaded 2-core machine). Packages ending in ".*": all their modules.
PRELOAD = (
    "pyspark.daemon", "pyspark.worker", "pyspark.sql.streaming.transform_with_state_driver_worker",
    "pyspark.sql.streaming.stateful_processor_api_client", "pyspark.sql.pandas.serializers",
    "pandas", "pyarrow", "changeflow.runtime.spark.deferred_processor", "changeflow.runtime.spark.processor",
    "changeflow.runtime.spark.packing", "changeflow.kernels.*",
)
_HEADER = struct.Struct("!i")
_lock = threading.Lock()
_servers: dict[str, Any] = {}  # launcher path -> the server's Popen (one per directory)
_base_path: list[str] = []  # the server's sys.path without its PYTHONPATH entries (a child's base path)

# The launcher's code: the standard library only (it runs under -I -S, the quickest start an interpreter has).
LAUNCHER = r'''
import array, json, os, signal, socket, struct, sys
SOCKET, PYTHON = {socket!r}, {python!r}
args = sys.argv[1:]
def real():
    os.execv(PYTHON, [PYTHON] + args)
if len(args) < 2 or args[0] != "-m":
    real()
try:
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.connect(SOCKET)
    request = json.dumps({{"argv": args, "env": dict(os.environ), "cwd": os.getcwd()}}).encode()
    server.sendmsg([struct.pack("!i", len(request))],
                   [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", [0, 1, 2]))])
    server.sendall(request)
except OSError:
    real()
def read_int():
    data = b""
    while len(data) < 4:
        part = server.recv(4 - len(data))
        if not part:
            return None
        data += part
    return struct.unpack("!i", data)[0]
pid = read_int()
if pid is None or pid <= 0:
    real()  # the server could not fork: the real interpreter runs the module
def forward(number, frame):
    try:
        os.kill(pid, number)
    except OSError:
        pass
for number in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGQUIT):
    signal.signal(number, forward)
code = read_int()
if code is None:  # the server is gone: the child is ended, as a process whose parent died
    forward(signal.SIGTERM, None)
    sys.exit(1)
if code < 0:  # the child died of a signal: so does the launcher
    signal.signal(-code, signal.SIG_DFL)
    os.kill(os.getpid(), -code)
sys.exit(code)
'''


def enabled(master: str, python_exec: str | None) -> bool:
    """Whether a session changeflow creates on ``master`` can get the launcher: a ``local[...]`` master (the
    executors see the driver's disk and run its interpreter), Spark's Python this interpreter
    (``PYSPARK_PYTHON`` unset or ``sys.executable``), and POSIX (fork, Unix sockets).

    >>> enabled("local[2]", sys.executable), enabled("spark://h:7077", sys.executable), enabled("local", "python2")
    (True, False, False)
    """
    same_python = python_exec in (None, sys.executable)
    return same_python and os.name == "posix" and (master == "local" or master.startswith("local["))


def start(directory: str) -> str:
    """Start a fork server under ``directory`` (once per directory) and write its launcher; the launcher's path.

    The server imports :data:`PRELOAD` in the background; until it listens, the launcher runs the real interpreter.
    """
    launcher = os.path.join(directory, "python-launcher")
    with _lock:
        if launcher in _servers and _servers[launcher].poll() is None:
            return launcher
        path = os.path.join(directory, "fork-server.sock")
        if os.path.exists(path):
            os.unlink(path)
        code = os.path.join(directory, "python_launcher.py")
        with open(code, "w") as f:
            # Without the server (not listening yet, or gone) the launcher runs the interpreter the way a
            # session without it would: through .worker_python's script, which keeps pyspark.zip off the path.
            f.write(LAUNCHER.format(socket=path, python=worker_python.launcher()))
        with open(launcher, "w") as f:  # a shell script: an interpreter's flags do not fit every shebang line
            f.write(f'#!/bin/sh\nexec {_quote(sys.executable)} -I -S {_quote(code)} "$@"\n')
        os.chmod(launcher, 0o755)
        # The server's own output (a warning as it imports, say) goes to a file beside it, not to the program's
        # console; a child writes to the streams its launcher was given.
        with open(os.path.join(directory, "fork-server.log"), "ab") as log:
            _servers[launcher] = subprocess.Popen(
                [sys.executable, "-m", __name__, path], stdin=subprocess.PIPE, stdout=log, stderr=log,
                env={**os.environ, "PYTHONPATH": _server_path()})
        return launcher


def _server_path() -> str:
    """The server's ``PYTHONPATH``: the directory this changeflow was imported from first (the driver may have
    put it on ``sys.path`` itself), then the environment's."""
    import changeflow

    home = os.path.dirname(os.path.dirname(os.path.abspath(changeflow.__file__)))
    return os.pathsep.join(p for p in (home, os.environ.get("PYTHONPATH", "")) if p)


def _quote(text: str) -> str:
    return "'" + text.replace("'", "'\"'\"'") + "'"


# --- the server ----------------------------------------------------------------------------------------
def serve(path: str, preload: tuple[str, ...] = PRELOAD) -> None:
    """Import ``preload``, listen on the Unix socket ``path`` and fork a child per request until stdin closes."""
    added = set(os.environ.get("PYTHONPATH", "").split(os.pathsep))
    _base_path[:] = [p for p in sys.path[1:] if p and p not in added]  # [0] is the directory of -m
    for name in preload:
        # A module that does not import here is imported by the child, as it would be without the server.
        with contextlib.suppress(Exception):
            module = importlib.import_module(name.removesuffix(".*"))
            if name.endswith(".*"):
                for found in pkgutil.walk_packages(module.__path__, module.__name__ + "."):
                    with contextlib.suppress(Exception):
                        importlib.import_module(found.name)
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_w, False)
    signal.set_wakeup_fd(wake_w)
    signal.signal(signal.SIGCHLD, lambda number, frame: None)  # wakes the loop through the wake-up fd
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path + ".tmp")
    os.rename(path + ".tmp", path)  # the socket appears when it listens, not before
    listener.listen(64)
    selector = selectors.DefaultSelector()
    selector.register(listener, selectors.EVENT_READ, "accept")
    selector.register(sys.stdin.fileno(), selectors.EVENT_READ, "parent")
    selector.register(wake_r, selectors.EVENT_READ, "child")
    children: dict[int, socket.socket] = {}  # pid -> its launcher's connection
    try:
        while True:
            for key, _ in selector.select():
                if key.data == "parent" and not os.read(sys.stdin.fileno(), 4096):
                    return  # the driver ended
                if key.data == "accept":
                    _fork(listener, selector, children, (listener, wake_r, wake_w))
                elif key.data == "child":
                    os.read(wake_r, 4096)
                    _reap(selector, children)
                elif isinstance(key.data, int):  # a launcher's connection closed: it died, so does its child
                    selector.unregister(key.fileobj)
                    _signal(key.data, signal.SIGTERM)
    finally:
        listener.close()
        if os.path.exists(path):
            os.unlink(path)


def _fork(listener: socket.socket, selector: selectors.BaseSelector, children: dict[int, socket.socket],
          own: tuple) -> None:
    conn, _ = listener.accept()
    fds: list[int] = []
    try:
        conn.settimeout(30)
        data, ancillary, _, _ = conn.recvmsg(_HEADER.size, socket.CMSG_SPACE(3 * array.array("i").itemsize))
        for level, kind, payload in ancillary:
            if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
                fds.extend(array.array("i", payload[: len(payload) - len(payload) % 4]))
        size = _HEADER.unpack(data)[0]
        body = b""
        while len(body) < size:
            part = conn.recv(size - len(body))
            if not part:
                raise OSError("the launcher closed its request")
            body += part
        request = json.loads(body)
        if len(fds) != 3:
            raise OSError(f"expected 3 file descriptors, got {len(fds)}")
    except (OSError, ValueError):
        for fd in fds:
            os.close(fd)
        conn.close()
        return
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:
        selector.close()
        _child(request, fds, [conn.fileno(), listener.fileno(), *own[1:], *(c.fileno() for c in children.values())])
    for fd in fds:
        os.close(fd)
    conn.settimeout(None)
    try:
        conn.sendall(_HEADER.pack(pid))
    except OSError:
        _signal(pid, signal.SIGTERM)
    children[pid] = conn
    selector.register(conn, selectors.EVENT_READ, pid)


def _reap(selector: selectors.BaseSelector, children: dict[int, socket.socket]) -> None:
    while children:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        conn = children.pop(pid, None)
        if conn is None:
            continue
        with contextlib.suppress(KeyError, ValueError):
            selector.unregister(conn)
        with contextlib.suppress(OSError):
            conn.sendall(_HEADER.pack(os.waitstatus_to_exitcode(status)))
        conn.close()


def _signal(pid: int, number: int) -> None:
    with contextlib.suppress(OSError):
        os.kill(pid, number)


def _child(request: dict, fds: list[int], close: list[int]) -> None:
    """In the forked child: become ``python -m module args`` with the launcher's streams, directory and
    environment; never returns."""
    code = 1
    try:
        signal.set_wakeup_fd(-1)
        for number in (signal.SIGCHLD, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT):
            signal.signal(number, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        for fd in close:
            with contextlib.suppress(OSError):
                os.close(fd)
        for target, fd in enumerate(fds):
            os.dup2(fd, target)
            os.close(fd)
        os.environ.clear()
        os.environ.update(request["env"])
        os.chdir(request["cwd"])
        _fresh_streams(bool(request["env"].get("PYTHONUNBUFFERED")))
        _fresh_path(request["env"].get("PYTHONPATH", ""))
        module, *args = request["argv"][1:]
        sys.argv = [module, *args]
        try:
            runpy.run_module(module, run_name="__main__", alter_sys=True)
            code = 0
        except SystemExit as exit_:
            code = exit_.code if isinstance(exit_.code, int) else (0 if exit_.code is None else 1)
            if not isinstance(exit_.code, int) and exit_.code is not None:
                print(exit_.code, file=sys.stderr)
        _run_exit_functions()
    except BaseException:
        traceback.print_exc()
    finally:
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(Exception):
                stream.flush()
        os._exit(code)


def _fresh_streams(unbuffered: bool) -> None:
    """New ``sys.std*`` objects on fds 0-2, buffered as a new interpreter's are (as with ``-u`` if ``unbuffered``)."""
    sys.stdin = io.TextIOWrapper(io.BufferedReader(io.FileIO(0, "r", closefd=False)), encoding="utf-8")
    for fd, name in ((1, "stdout"), (2, "stderr")):
        stream = io.TextIOWrapper(io.BufferedWriter(io.FileIO(fd, "w", closefd=False)), encoding="utf-8",
                                  errors="backslashreplace" if fd == 2 else "strict",
                                  line_buffering=fd == 2 or os.isatty(fd), write_through=unbuffered)
        setattr(sys, name, stream)


def _fresh_path(python_path: str) -> None:
    """``sys.path`` as a new interpreter started with ``PYTHONPATH=python_path`` and ``-m`` has it: the
    working directory, those entries, then the server's own path without what its ``PYTHONPATH`` added."""
    given = [p for p in python_path.split(os.pathsep) if p]
    base = [p for p in _base_path if p not in given]
    sys.path[:] = [os.getcwd(), *given, *base]


def _run_exit_functions() -> None:
    import atexit

    atexit._run_exitfuncs()


if __name__ == "__main__":
    serve(sys.argv[1])
