"""PyFlink 2.3 DataStream names changeflow does not implement: using one raises, naming it.

The lists are PyFlink 2.3's public names (``dir()`` of its classes and of ``pyflink.datastream``)
minus what changeflow implements or accepts (``tests/datastream/test_pyflink_datastream_surface.py`` checks
both against the names recorded from PyFlink 2.3). A module-level name listed here fails at its
import, naming itself; a method, when called.
"""

from __future__ import annotations

from typing import Any

from changeflow.common.refusals import Refusals

_PYTHON_FILES = ("ship Python files and environments with Spark (spark-submit --py-files / --archives, "
                 "SparkContext.addPyFile, PYSPARK_PYTHON)")
_JAVA = "Java sources and input formats do not run on Spark; use from_source with a changeflow connector, " \
        "or from_collection"
_ASYNC = "asynchronous I/O operators are not implemented; call the service from a map or process function"
_STATE_BACKEND = ("changeflow keeps state in Spark's RocksDB state store, under changeflow.checkpoint-dir; "
                  "there is no state backend or checkpoint storage to choose")

ENVIRONMENT = {
    "add_python_archive": _PYTHON_FILES, "add_python_file": _PYTHON_FILES,
    "set_python_requirements": _PYTHON_FILES, "set_python_executable": _PYTHON_FILES,
    "add_source": _JAVA, "create_input": _JAVA,
    "register_cached_file": "ship files to Spark executors with SparkContext.addFile",
    "execute_async": "execute() runs the job to its end (or until stopped); run it in a thread of your own",
    "set_default_savepoint_directory": "changeflow takes no savepoints; a job resumes from its own checkpoint "
                                       "under changeflow.checkpoint-dir",
}

UNSUPPORTED: dict[str, dict[str, str]] = {
    "StreamExecutionEnvironment": ENVIRONMENT,
}

# Names of the pyflink.datastream module changeflow does not have (refused at import).
MODULE_NAMES: dict[str, str] = {
    **dict.fromkeys(("AsyncDataStream", "AsyncFunction", "AsyncRetryPredicate", "AsyncRetryStrategy",
                     "async_data_stream", "async_retry_strategies"), _ASYNC),
    **dict.fromkeys(("StateBackend", "HashMapStateBackend", "EmbeddedRocksDBStateBackend", "CustomStateBackend",
                     "PredefinedOptions", "MemorySize", "state_backend", "CheckpointStorage",
                     "CustomCheckpointStorage", "FileSystemCheckpointStorage", "JobManagerCheckpointStorage",
                     "checkpoint_storage"), _STATE_BACKEND),
    **dict.fromkeys(("TriggerResult", "MergingWindowAssigner"),
                    "user-defined triggers and window assigners are not implemented; use the assigners and "
                    "triggers of changeflow.datastream.window"),
    "SlotSharingGroup": "fine-grained resources of Flink's slots do not apply on Spark; slot_sharing_group() "
                        "takes a group's name and has no effect",
    "DynamicProcessingTimeSessionWindows": "processing-time session windows with a dynamic gap are not "
                                           "implemented; use with_gap(size), or event-time sessions",
    **dict.fromkeys(("CountWindowSerializer", "GlobalWindowSerializer", "TimeWindowSerializer", "TypeSerializer"),
                    "changeflow pickles windows and values; there are no custom type serializers"),
    "OperatorStateStore": "operator (non-keyed) state is not implemented; key the stream and use keyed state",
    "AsyncFunctionDescriptor": _ASYNC,
    **dict.fromkeys(("SinkFunction", "SourceFunction"),
                    "Java SinkFunction/SourceFunction wrappers do not run on Spark; use sink_to/from_source with a "
                    "changeflow connector"),
}

REFUSALS = Refusals(UNSUPPORTED)


def refuse_module_name(name: str, module: str = "pyflink.datastream") -> None:
    """Raise for ``<module>.<name>`` (PyFlink's ``pyflink.datastream`` or one of its modules: ``functions``,
    ``window``, ``state``) if changeflow lacks it on purpose (else return)."""
    if name in MODULE_NAMES:
        raise NotImplementedError(f"{module}.{name} is not supported by changeflow: {MODULE_NAMES[name]}")


def module_getattr(module: str) -> Any:
    """A module's ``__getattr__``: PyFlink's names of ``module`` changeflow lacks on purpose fail naming
    themselves; any other unknown name is an ``AttributeError``."""
    def getattr_(name: str) -> Any:
        refuse_module_name(name, module)
        raise AttributeError(f"module {module.replace('pyflink', 'changeflow')!r} has no attribute {name!r}")
    return getattr_
