"""changeflow's temp root: a crashed process's temp files are removed by the next start, nothing else is."""

import os
import subprocess
import sys

import pytest

from changeflow.runtime.spark import temp_root


@pytest.fixture
def root(tmp_path, monkeypatch):
    monkeypatch.setenv(temp_root.ROOT_ENV, str(tmp_path / "changeflow-tmp"))
    monkeypatch.setattr(temp_root, "_process_dir", None)
    return tmp_path / "changeflow-tmp"


def owned(root, name: str, pid: int, started: str):
    path = root / name
    (path / "java-tmp").mkdir(parents=True)
    (path / "java-tmp" / "librocksdbjni123.so").write_bytes(b"x" * 100)
    (path / temp_root.OWNER).write_text(f"{pid} {started}\n")
    return path


def test_only_directories_of_dead_changeflow_processes_are_removed(root):
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    parent = os.getppid()
    gone = owned(root, "gone", dead.pid, "123")
    running = owned(root, "running", parent, temp_root.start_time(parent))
    reused = owned(root, "reused", parent, "1")  # the pid now belongs to a process started at another time
    foreign = root / "not-ours"
    (foreign / "data").mkdir(parents=True)
    (root / "a-file.tmp").write_text("not a directory of ours")
    removed = temp_root.clean_dead()
    assert sorted(removed) == sorted([str(gone), str(reused)])
    assert not gone.exists() and not reused.exists()
    assert running.exists() and (foreign / "data").exists() and (root / "a-file.tmp").exists()


def test_this_process_gets_an_owned_directory_for_its_session(root, monkeypatch):
    monkeypatch.delenv("SPARK_LOCAL_DIRS", raising=False)
    settings = temp_root.session_settings("-Xss4m")
    path = temp_root.process_dir()
    assert os.path.dirname(path) == str(root)
    with open(os.path.join(path, temp_root.OWNER)) as owner:
        assert owner.read().split()[0] == str(os.getpid())
    assert os.environ["SPARK_LOCAL_DIRS"] == os.path.join(path, "spark-local")
    assert settings["spark.driver.extraJavaOptions"] == f"-Xss4m -Djava.io.tmpdir={os.path.join(path, 'java-tmp')}"
    assert temp_root.clean_dead() == [] and os.path.isdir(path)  # its own directory is never removed


def test_a_temporary_job_directory_lives_under_the_process_directory(root):
    from changeflow.runtime.spark.job_directory import job_directory

    with job_directory(None, None) as path:
        assert os.path.dirname(path) == temp_root.process_dir()
    assert not os.path.exists(path)
