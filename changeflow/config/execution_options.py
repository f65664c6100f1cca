"""Flink's ``execution.*``, ``pipeline.*`` and ``parallelism.*`` keys changeflow implements: the runtime
mode, the job name, and the output flush interval (FLIP-365). Defaults are Flink 2.3's; descriptions say
what the key does in changeflow."""

from __future__ import annotations

from changeflow.config.options import ConfigOption, OptionType, register

PIPELINE_NAME = register(
    ConfigOption(
        "pipeline.name",
        OptionType.STRING,
        None,
        description=(
            "The job name. With changeflow.checkpoint-dir set, a streaming INSERT job or a "
            "DataStream execute() keeps its checkpoint under this name and resumes from it "
            "when run again. Unset: an INSERT job is named insert-into_<sink>, as in Flink."
        ),
    )
)

PIPELINE_GLOBAL_JOB_PARAMETERS = register(
    ConfigOption(
        "pipeline.global-job-parameters",
        OptionType.STRING,
        None,
        description=(
            "Job parameters as key:value pairs separated by commas (k1:v1,k2:v2; a key or value "
            "in quotes may hold commas and colons). Python user-defined functions of the Table API "
            "and SQL read them with FunctionContext.get_job_parameter, DataStream functions with "
            "RuntimeContext.get_job_parameter; ExecutionConfig.set_global_job_parameters sets them."
        ),
    )
)

EXECUTION_RUNTIME_MODE = register(
    ConfigOption(
        "execution.runtime-mode",
        OptionType.ENUM,
        "STREAMING",
        allowed_values=("STREAMING", "BATCH", "AUTOMATIC"),
        description=(
            "How a DataStream program runs. STREAMING processes input incrementally and "
            "emits a changelog (Spark Structured Streaming); BATCH runs over bounded input "
            "only and emits final results (Spark batch); AUTOMATIC picks BATCH when every "
            "source is bounded and STREAMING otherwise."
        ),
    )
)

PARALLELISM_DEFAULT = register(
    ConfigOption(
        "parallelism.default",
        OptionType.INT,
        1,
        description="The default parallelism of jobs (Flink's parallelism.default).",
    )
)

PIPELINE_AUTO_WATERMARK_INTERVAL = register(
    ConfigOption(
        "pipeline.auto-watermark-interval",
        OptionType.DURATION,
        "200 ms",
        description=(
            "How far a SQL table's watermark must advance before its watermark assigner emits it "
            "(Flink's WatermarkAssignerOperator emits a watermark after a row once it is more "
            "than this ahead of the last one emitted). changeflow also emits the latest one at "
            "the end of each micro-batch, where Flink's periodic timer would."
        ),
    )
)

EXECUTION_MAX_FLUSH_INTERVAL = register(
    ConfigOption(
        "execution.max-flush-interval",
        OptionType.DURATION,
        None,
        description=(
            "When set, operators whose output is idempotent (later output for a key "
            "supersedes earlier output) buffer the latest output per key and emit it at most "
            "once per this interval, instead of one output per input (FLIP-365). Less output "
            "traffic and more throughput, at the cost of latency and state. Unset by default: "
            "every change is emitted."
        ),
    )
)

EXECUTION_FLUSH_MEMORY_BUFFER_ONLY = register(
    ConfigOption(
        "execution.flush.memory-buffer-only",
        OptionType.BOOLEAN,
        False,
        description=(
            "Whether outputs waiting for the periodic flush are held only in memory. When "
            "true, the buffer is also flushed whenever it reaches "
            "execution.flush.memory-buffer-max-entries, which saves state writes but flushes "
            "more often (FLIP-365)."
        ),
    )
)

EXECUTION_FLUSH_MEMORY_BUFFER_MAX_ENTRIES = register(
    ConfigOption(
        "execution.flush.memory-buffer-max-entries",
        OptionType.INT,
        10000,
        min_value=1,
        description=(
            "changeflow-specific (Flink has no such key): the most entries an operator holds "
            "in its in-memory flush buffer before it is forced to flush, when "
            "execution.flush.memory-buffer-only is true."
        ),
    )
)
