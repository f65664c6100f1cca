"""File stores (connectors/filestore.py): one contract, the local store and the JVM's Hadoop FileSystem.

The Hadoop store runs on the shared local session with ``file://`` URIs: the
real JVM code path (``org.apache.hadoop.fs.FileSystem``) over the local disk.
"""

from __future__ import annotations

import os

import pytest

from changeflow.common.row_kind import RowKind
from changeflow.connectors import filestore
from changeflow.connectors.filesystem import FileSystemSink, FileSystemSource, data_files
from changeflow.connectors.sink_job import SinkJob
from changeflow.runtime.changes import Change


@pytest.fixture(params=["local", pytest.param("hadoop", marks=pytest.mark.spark)])
def store(request):
    if request.param == "local":
        return filestore.LOCAL
    from changeflow.runtime.spark.connectors.hadoop_store import HadoopFileStore

    return HadoopFileStore(request.getfixturevalue("spark"))


def test_store_contract_on_file_uris(store, tmp_path):
    root = f"file://{tmp_path}/a/b"
    assert not store.exists(root) and store.entries(root) == []
    store.makedirs(root)
    store.makedirs(root)  # again: nothing
    assert store.is_dir(root) and os.path.isdir(tmp_path / "a" / "b")

    file = filestore.join(root, "f.bin")
    store.write_bytes(file, b"\x00one")
    assert store.exists(file) and not store.is_dir(file)
    assert store.read_bytes(file) == b"\x00one"
    store.write_bytes(file, b"two")  # overwrites
    assert (tmp_path / "a" / "b" / "f.bin").read_bytes() == b"two"

    other = filestore.join(root, "g.bin")
    store.write_bytes(other, b"three")
    assert not store.publish(other, file)  # the target exists: refused, nothing moved
    assert store.read_bytes(file) == b"two" and store.exists(other)
    store.replace(other, file)
    assert store.read_bytes(file) == b"three" and not store.exists(other)
    assert store.publish(file, other) and store.read_bytes(other) == b"three" and not store.exists(file)

    store.makedirs(filestore.join(root, "sub"))
    assert sorted(store.entries(root)) == [("g.bin", False), ("sub", True)]

    store.set_modified_ms(other, 1_000_000_123)
    assert store.modified_ms(other) == 1_000_000_123
    assert os.stat(tmp_path / "a" / "b" / "g.bin").st_mtime_ns == 1_000_000_123 * 1_000_000

    store.delete(other)
    store.delete(other)  # gone already: nothing
    assert not store.exists(other)
    store.delete(root, recursive=True)
    assert not os.path.exists(tmp_path / "a" / "b")


def test_file_uris_name_the_local_disk():
    assert filestore.local_path("file:///data/t") == "/data/t"
    assert filestore.local_path("file://localhost/data/t") == "/data/t"
    assert filestore.local_path("/data/t") == "/data/t"
    with pytest.raises(ValueError, match="names host 'other'"):
        filestore.local_path("file://other/data/t")
    assert filestore.is_local("file:/x") and filestore.is_local("rel/x") and not filestore.is_local("hdfs://nn/x")


def test_a_scheme_without_a_store_fails_naming_it(monkeypatch):
    monkeypatch.setattr(filestore, "_stores", {})
    with pytest.raises(ValueError, match="No file store for scheme 'hdfs' of path 'hdfs://nn/t'"):
        filestore.store_for("hdfs://nn/t")


def test_filesystem_sink_and_source_take_file_uris(store, tmp_path, monkeypatch):
    monkeypatch.setitem(filestore._stores, "file", lambda path: store)
    path = f"file://{tmp_path}/out"
    table = _csv_table(path)
    sink = FileSystemSink(table)
    sink.open(SinkJob("ab12", directory=None))

    sink.write([Change(RowKind.INSERT, ("a", 1))], batch_id=0)
    sink.write([Change(RowKind.INSERT, ("b", 2))], batch_id=1)
    first, second = (os.stat(tmp_path / "out" / n).st_mtime_ns for n in
                     ("part-00000000000000000000-ab12-0", "part-00000000000000000001-ab12-1"))
    assert first < second  # a monitored directory reads them in write order
    sink.write([Change(RowKind.INSERT, ("c", 3))], batch_id=0)  # batch 0 again: replaces its file
    names = sorted(os.listdir(tmp_path / "out"))
    assert [n for n in names if not n.startswith(".")] == [
        "part-00000000000000000000-ab12-0", "part-00000000000000000001-ab12-1"]
    assert not (tmp_path / "file:").exists()
    assert [os.path.basename(f) for f in data_files(path)] == [
        "part-00000000000000000000-ab12-0", "part-00000000000000000001-ab12-1"]
    assert all(f.startswith("file://") for f in data_files(path))
    assert FileSystemSource(table, streaming=False).rows() == [("c", 3), ("b", 2)]


def test_a_missing_file_uri_source_names_the_path(tmp_path):
    table = _csv_table(f"file://{tmp_path}/missing")
    with pytest.raises(FileNotFoundError, match=f"File file://{tmp_path}/missing of table"):
        FileSystemSource(table, streaming=False).rows()


def test_sink_job_bookkeeping_in_a_file_uri_directory(store, tmp_path, monkeypatch):
    monkeypatch.setitem(filestore._stores, "file", lambda path: store)
    workdir = f"file://{tmp_path}"
    job = SinkJob.in_directory(workdir, resumed=False)
    job.mark_delivered(4)
    assert (tmp_path / "sink-delivered").read_text() == "4"
    again = SinkJob.in_directory(workdir, resumed=True)
    assert again.writer == job.writer and again.delivered() == 4


def test_job_directories_below_a_file_uri_checkpoint_dir(tmp_path):
    from changeflow.runtime.spark.job_directory import committed_batches, job_directory, temporary_directory

    root = f"file://{tmp_path}/ck"
    with job_directory(root, "insert-into_t") as path:
        assert path == f"file://{tmp_path}/ck/insert-into_t"
    assert os.listdir(tmp_path) == ["ck"] and os.listdir(tmp_path / "ck") == ["insert-into_t"]
    with job_directory(root, None) as temporary:
        assert temporary.startswith(f"file://{tmp_path}/ck/changeflow-")
        assert os.path.isdir(filestore.local_path(temporary))
    assert not os.path.exists(filestore.local_path(temporary))  # removed with the job
    assert committed_batches(f"{root}/insert-into_t") == []
    other = temporary_directory(root)
    assert other.startswith(root) and os.path.isdir(filestore.local_path(other))


def test_staged_files_off_a_local_master_need_the_checkpoint_dir(tmp_path):
    from changeflow.runtime.spark.job_directory import remove_directory, require_shared, temporary_directory

    driver_only = temporary_directory(None)
    try:
        require_shared("local[2]", driver_only, "source s")  # one machine: fine
        require_shared("local-cluster[2,1,1024]", driver_only, "source s")
        with pytest.raises(ValueError, match=r"source s is staged .* Set changeflow\.checkpoint-dir"):
            require_shared("spark://host:7077", os.path.join(driver_only, "source-1"), "source s")
    finally:
        remove_directory(driver_only)
    shared = temporary_directory(f"file://{tmp_path}")
    require_shared("spark://host:7077", shared + "/source-1", "source s")  # below the checkpoint dir: fine


def _csv_table(path: str):
    from changeflow.catalog import CatalogTable
    from changeflow.catalog.schema import DeclaredColumn, DeclaredSchema
    from changeflow.common.types import DataTypes

    schema = DeclaredSchema((DeclaredColumn("k", DataTypes.STRING(), "STRING"),
                             DeclaredColumn("v", DataTypes.INT(), "INT")))
    return CatalogTable("t", schema, {"connector": "filesystem", "path": path, "format": "csv"})
