"""Configuration keys changeflow knows (Flink's names and defaults) and Flink's duration format.

``changeflow.common.Configuration`` holds the values; this package holds what the keys mean.
See ``changeflow.config.options`` for how known, unknown and ``spark.`` keys are treated;
importing the package registers every key (the ``*_options`` modules declare them by area).
"""

from changeflow.config.changeflow_options import (
    CHANGEFLOW_CHECKPOINT_DIR,
    CHANGEFLOW_SHIP_PACKAGE,
    CHANGEFLOW_SOURCE_ROWS_PER_BATCH,
    CHANGEFLOW_SPARK_LOG,
    CHANGEFLOW_SPARK_MASTER,
    CHANGEFLOW_SPARK_UI,
    CHANGEFLOW_SPARK_WARM_PYTHON,
    CHANGEFLOW_STATE_BUCKETS,
)
from changeflow.config.durations import (
    format_duration,
    parse_duration,
    parse_duration_nanos,
    to_millis,
)
from changeflow.config.execution_options import (
    EXECUTION_FLUSH_MEMORY_BUFFER_MAX_ENTRIES,
    EXECUTION_FLUSH_MEMORY_BUFFER_ONLY,
    EXECUTION_MAX_FLUSH_INTERVAL,
    EXECUTION_RUNTIME_MODE,
    PARALLELISM_DEFAULT,
    PIPELINE_NAME,
)
from changeflow.config.memory_size import format_memory_size, parse_memory_size
from changeflow.config.option_type import ConfigOption, OptionType, to_config_string
from changeflow.config.options import (
    PASS_THROUGH_PREFIX,
    VALIDATED_PREFIXES,
    canonical_key,
    check_key,
    is_validated_key,
    lookup,
    misspelling_of,
    register,
    registered_options,
    suggest_keys,
)
from changeflow.config.sink_options import (
    TABLE_EXEC_SINK_NOT_NULL_ENFORCER,
    TABLE_EXEC_SINK_REQUIRE_ON_CONFLICT,
    TABLE_EXEC_SINK_UPSERT_MATERIALIZE,
    TABLE_EXEC_SINK_UPSERT_MATERIALIZE_STRATEGY_ADAPTIVE_THRESHOLD_HIGH,
    TABLE_EXEC_SINK_UPSERT_MATERIALIZE_STRATEGY_ADAPTIVE_THRESHOLD_LOW,
    TABLE_EXEC_SINK_UPSERT_MATERIALIZE_STRATEGY_TYPE,
)
from changeflow.config.table_options import (
    TABLE_EXEC_MINI_BATCH_ALLOW_LATENCY,
    TABLE_EXEC_MINI_BATCH_ENABLED,
    TABLE_EXEC_MINI_BATCH_SIZE,
    TABLE_EXEC_STATE_TTL,
    TABLE_OPTIMIZER_AGG_PHASE_STRATEGY,
    TABLE_OPTIMIZER_DISTINCT_AGG_SPLIT_BUCKET_NUM,
    TABLE_OPTIMIZER_DISTINCT_AGG_SPLIT_ENABLED,
    validate_mini_batch,
)

__all__ = [
    "CHANGEFLOW_CHECKPOINT_DIR",
    "CHANGEFLOW_SHIP_PACKAGE",
    "CHANGEFLOW_SOURCE_ROWS_PER_BATCH",
    "CHANGEFLOW_SPARK_LOG",
    "CHANGEFLOW_SPARK_MASTER",
    "CHANGEFLOW_SPARK_UI",
    "CHANGEFLOW_SPARK_WARM_PYTHON",
    "CHANGEFLOW_STATE_BUCKETS",
    "EXECUTION_FLUSH_MEMORY_BUFFER_MAX_ENTRIES",
    "EXECUTION_FLUSH_MEMORY_BUFFER_ONLY",
    "EXECUTION_MAX_FLUSH_INTERVAL",
    "EXECUTION_RUNTIME_MODE",
    "PARALLELISM_DEFAULT",
    "PASS_THROUGH_PREFIX",
    "PIPELINE_NAME",
    "TABLE_EXEC_MINI_BATCH_ALLOW_LATENCY",
    "TABLE_EXEC_MINI_BATCH_ENABLED",
    "TABLE_EXEC_MINI_BATCH_SIZE",
    "TABLE_EXEC_SINK_NOT_NULL_ENFORCER",
    "TABLE_EXEC_SINK_REQUIRE_ON_CONFLICT",
    "TABLE_EXEC_SINK_UPSERT_MATERIALIZE",
    "TABLE_EXEC_SINK_UPSERT_MATERIALIZE_STRATEGY_ADAPTIVE_THRESHOLD_HIGH",
    "TABLE_EXEC_SINK_UPSERT_MATERIALIZE_STRATEGY_ADAPTIVE_THRESHOLD_LOW",
    "TABLE_EXEC_SINK_UPSERT_MATERIALIZE_STRATEGY_TYPE",
    "TABLE_EXEC_STATE_TTL",
    "TABLE_OPTIMIZER_AGG_PHASE_STRATEGY",
    "TABLE_OPTIMIZER_DISTINCT_AGG_SPLIT_BUCKET_NUM",
    "TABLE_OPTIMIZER_DISTINCT_AGG_SPLIT_ENABLED",
    "VALIDATED_PREFIXES",
    "ConfigOption",
    "OptionType",
    "canonical_key",
    "check_key",
    "format_duration",
    "format_memory_size",
    "is_validated_key",
    "lookup",
    "misspelling_of",
    "parse_duration",
    "parse_duration_nanos",
    "parse_memory_size",
    "register",
    "registered_options",
    "suggest_keys",
    "to_config_string",
    "to_millis",
    "validate_mini_batch",
]
