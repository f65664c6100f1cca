"""A throwaway PostgreSQL cluster for tests: ``initdb`` into a temporary directory, ``postgres`` on a free port.

The server is Debian's PostgreSQL (setup.sh installs the ``postgresql`` package when
``initdb`` is missing). PostgreSQL refuses to run as root, so when the tests run as
root the cluster belongs to the ``postgres`` user (created by Debian's package) and
its programs run under ``runuser``. It listens on 127.0.0.1 only, with password
authentication (scram-sha-256) over TCP, so a wrong password is refused as on a real
server. ``stop()`` stops only the server this object started, and removes its directory.
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from dataclasses import dataclass

USER = "changeflow"
PASSWORD = "changeflow-test"


def bin_dir() -> str:
    """The directory of ``initdb`` and ``postgres``: on PATH, else Debian's newest /usr/lib/postgresql/N/bin."""
    found = shutil.which("initdb")
    if found:
        return os.path.dirname(found)
    candidates = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"),
                        key=lambda p: int(p.split("/")[-3]) if p.split("/")[-3].isdigit() else 0)
    if not candidates:
        raise RuntimeError("PostgreSQL's initdb was not found (on PATH or in /usr/lib/postgresql/*/bin): run "
                           "setup.sh, which installs Debian's 'postgresql' package")
    return os.path.dirname(candidates[-1])


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class PostgresServer:
    """A running cluster; ``url`` is its JDBC url for the ``postgres`` database."""

    directory: str
    port: int
    process: subprocess.Popen

    @property
    def url(self) -> str:
        return f"jdbc:postgresql://127.0.0.1:{self.port}/postgres"

    def connect(self, **extra):
        """A psycopg connection (autocommit) as the test user."""
        import psycopg

        return psycopg.connect(host="127.0.0.1", port=self.port, dbname="postgres", user=USER,
                               password=PASSWORD, autocommit=True, **extra)

    def execute(self, statement: str, params=None) -> list[tuple]:
        with self.connect() as conn, conn.cursor() as cur:
            cur.execute(statement, params)
            return cur.fetchall() if cur.description else []

    def stop(self) -> None:
        if self.process.poll() is None:
            # SIGINT to the process group this object started (runuser and postgres under it): PostgreSQL's
            # fast shutdown, which ends its sessions and stops.
            os.killpg(self.process.pid, signal.SIGINT)
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        shutil.rmtree(self.directory, ignore_errors=True)


def start(wal_level: str = "logical") -> PostgresServer:
    """initdb a new cluster in a temporary directory and start it; raises with the server's log if it fails."""
    bindir = bin_dir()
    directory = tempfile.mkdtemp(prefix="changeflow-pg-")
    data, log, password_file = (os.path.join(directory, n) for n in ("data", "server.log", "password"))
    with open(password_file, "w") as f:
        f.write(PASSWORD + "\n")
    prefix: list[str] = []
    if os.geteuid() == 0:  # postgres refuses root: run it as Debian's postgres user
        try:
            owner = pwd.getpwnam("postgres")
        except KeyError:
            raise RuntimeError("tests run as root need a 'postgres' user to run PostgreSQL (Debian's "
                               "'postgresql' package creates it; setup.sh installs that)") from None
        for path in (directory, password_file):
            os.chown(path, owner.pw_uid, owner.pw_gid)
        prefix = ["runuser", "-u", "postgres", "--"]
    subprocess.run([*prefix, os.path.join(bindir, "initdb"), "-D", data, "-U", USER, f"--pwfile={password_file}",
                    "--auth-host=scram-sha-256", "--auth-local=trust", "-E", "UTF8", "--locale=C", "--no-sync"],
                   check=True, capture_output=True)
    port = _free_port()
    with open(log, "w") as out:
        if prefix:
            os.chown(log, pwd.getpwnam("postgres").pw_uid, pwd.getpwnam("postgres").pw_gid)
        process = subprocess.Popen([*prefix, os.path.join(bindir, "postgres"), "-D", data, "-p", str(port),
                                    "-c", "listen_addresses=127.0.0.1", "-c", f"unix_socket_directories={directory}",
                                    "-c", "fsync=off", "-c", "synchronous_commit=off", "-c", f"wal_level={wal_level}",
                                    "-c", "max_connections=50"],
                                   stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    server = PostgresServer(directory, port, process)
    deadline = time.monotonic() + 60
    while True:
        try:
            server.execute("SELECT 1")
            return server
        except Exception:  # noqa: BLE001 - not up yet
            if process.poll() is not None or time.monotonic() > deadline:
                with open(log) as f:
                    text = f.read()
                server.stop()
                raise RuntimeError(f"PostgreSQL did not start on port {port}:\n{text}") from None
            time.sleep(0.2)
