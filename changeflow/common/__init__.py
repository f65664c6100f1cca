"""Values shared by every API: rows, row kinds, types and configuration (PyFlink's names).

PyFlink 2.3's other ``pyflink.common`` names are refused at their import, naming themselves and what
to use instead (``from changeflow.common import RestartStrategies`` raises ``NotImplementedError``).
"""

from typing import Any

from changeflow.common.configuration import Configuration
from changeflow.common.execution_config import ExecutionConfig
from changeflow.common.job_execution_result import JobExecutionResult, JobID
from changeflow.common.row import Row
from changeflow.common.row_kind import RowKind
from changeflow.common.serialization import DeserializationSchema, Encoder, SerializationSchema, SimpleStringSchema
from changeflow.common.time import Duration, Instant, Time
from changeflow.common.typeinfo import Types, TypeInformation
from changeflow.common.types import DataType, DataTypes
from changeflow.common.watermark_strategy import WatermarkStrategy

__all__ = ["Configuration", "DataType", "DataTypes", "DeserializationSchema", "Duration", "Encoder",
           "ExecutionConfig", "Instant", "JobExecutionResult", "JobID", "Row", "RowKind", "SerializationSchema",
           "SimpleStringSchema", "Time", "TypeInformation", "Types", "WatermarkStrategy"]

_JOB_CLIENT = ("execute_async() and its JobClient are not supported: execute() runs a DataStream job to its end; "
               "an INSERT's TableResult.get_job_client() gives its job (wait, cancel, get_job_status)")
_RESTARTS = ("Flink's restart strategies do not apply: Spark retries a failed task (spark.task.maxFailures) and a "
             "job run again resumes from its checkpoint (changeflow.checkpoint-dir)")
# PyFlink 2.3's pyflink.common names changeflow does not have, and why.
_REFUSED = {
    **dict.fromkeys(("JobClient", "JobStatus", "CompletableFuture"), _JOB_CLIENT),
    **dict.fromkeys(("RestartStrategies", "RestartStrategyConfiguration"), _RESTARTS),
    **dict.fromkeys(("ConfigOption", "ConfigOptions"),
                    "set keys by name: Configuration.set_string(key, value), or set(key, value) with a typed value"),
    "ByteArraySchema": "records are strings (SimpleStringSchema) or the JSON row formats' Rows",
    "TypeSerializer": "changeflow pickles records; there are no custom type serializers",
    "InputDependencyConstraint": "a Flink scheduler setting (deprecated there) with no meaning on Spark",
    "AssignerWithPeriodicWatermarksWrapper": "Java watermark assigners do not run on Spark; use WatermarkStrategy",
}


def __getattr__(name: str) -> Any:
    if name in _REFUSED:
        raise NotImplementedError(f"pyflink.common.{name} is not supported by changeflow: {_REFUSED[name]}")
    raise AttributeError(f"module 'changeflow.common' has no attribute {name!r}")
