"""A :class:`~changeflow.connectors.filestore.FileStore` over the JVM's Hadoop ``FileSystem``.

The driver-side file operations of changeflow (job directories, sink part
files, staged source files, flush signals) go through the same Hadoop
filesystems Spark itself uses for the path's scheme (``hdfs://``, ``s3a://``,
...), configured by the session's Hadoop configuration. It runs on the driver
only (it calls the JVM through py4j).

Where Hadoop filesystems differ from a local disk: ``replace`` and
``publish`` are atomic where the filesystem's renames are (HDFS; object
stores such as S3A copy), and ``set_modified_ms`` does nothing on object
stores that keep no settable modification time (S3A).
"""

from __future__ import annotations

from typing import Any

from pyspark.sql import SparkSession

from changeflow.connectors import filestore


class HadoopFileStore:
    """Files of any Hadoop-supported URI, through ``spark``'s JVM."""

    def __init__(self, spark: SparkSession) -> None:
        context = spark.sparkContext
        if context._jvm is None or context._gateway is None or context._jsc is None:
            raise RuntimeError("the SparkSession's context is stopped: its JVM is gone")
        # py4j resolves Java packages, classes and methods by attribute at run time: no static types.
        self._jvm: Any = context._jvm
        self._gateway: Any = context._gateway
        self._conf: Any = context._jsc.hadoopConfiguration()  # pyright: ignore[reportOptionalCall] - a py4j method

    def _resolve(self, path: str):
        jpath = self._jvm.org.apache.hadoop.fs.Path(path)
        return jpath.getFileSystem(self._conf), jpath

    def _status(self, path: str):
        fs, jpath = self._resolve(path)
        return fs.getFileStatus(jpath) if fs.exists(jpath) else None

    def exists(self, path: str) -> bool:
        fs, jpath = self._resolve(path)
        return bool(fs.exists(jpath))

    def is_dir(self, path: str) -> bool:
        status = self._status(path)
        return status is not None and bool(status.isDirectory())

    def makedirs(self, path: str) -> None:
        fs, jpath = self._resolve(path)
        if not fs.mkdirs(jpath):
            raise OSError(f"could not create directory {path}")

    def entries(self, path: str) -> list[tuple[str, bool]]:
        if not self.is_dir(path):
            return []
        fs, jpath = self._resolve(path)
        return [(s.getPath().getName(), bool(s.isDirectory())) for s in fs.listStatus(jpath)]

    def read_bytes(self, path: str) -> bytes:
        fs, jpath = self._resolve(path)
        stream = fs.open(jpath)
        try:
            # commons-io is on every Spark classpath; py4j returns a Java byte[] as bytes.
            return bytes(self._jvm.org.apache.commons.io.IOUtils.toByteArray(stream))
        finally:
            stream.close()

    def write_bytes(self, path: str, data: bytes) -> None:
        fs, jpath = self._resolve(path)
        stream = fs.create(jpath, True)
        try:
            stream.write(bytearray(data))
        finally:
            stream.close()

    def replace(self, source: str, target: str) -> None:
        # FileSystem.rename never overwrites; FileContext.rename with OVERWRITE does, atomically on HDFS.
        _, src = self._resolve(source)
        _, dst = self._resolve(target)
        hadoop_fs = self._jvm.org.apache.hadoop.fs
        options = self._gateway.new_array(hadoop_fs.Options.Rename, 1)
        options[0] = hadoop_fs.Options.Rename.OVERWRITE
        context = hadoop_fs.FileContext.getFileContext(dst.toUri(), self._conf)
        context.rename(src, dst, options)

    def publish(self, source: str, target: str) -> bool:
        fs, src = self._resolve(source)
        _, dst = self._resolve(target)
        if fs.exists(dst):  # the local filesystem's rename would overwrite; HDFS's fails by itself
            return False
        return bool(fs.rename(src, dst))

    def delete(self, path: str, recursive: bool = False) -> None:
        fs, jpath = self._resolve(path)
        if fs.exists(jpath):
            fs.delete(jpath, recursive)

    def modified_ms(self, path: str) -> int:
        status = self._status(path)
        if status is None:
            raise FileNotFoundError(path)
        return int(status.getModificationTime())

    def set_modified_ms(self, path: str, ms: int) -> None:
        fs, jpath = self._resolve(path)
        try:
            fs.setTimes(jpath, ms, -1)  # -1: access time unchanged
        except Exception as e:  # noqa: BLE001 - py4j wraps the JVM's UnsupportedOperationException
            if "UnsupportedOperation" not in str(e):
                raise


def register(spark: SparkSession) -> None:
    """Serve every non-local scheme through ``spark``'s Hadoop filesystems (the latest session wins)."""
    store = HadoopFileStore(spark)
    filestore.register_scheme("*", lambda path: store)
