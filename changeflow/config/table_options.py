"""Flink's ``table.exec.*`` / ``table.optimizer.*`` keys for mini-batch, the aggregation phases and state
TTL, and the check across the mini-batch keys Flink's planner makes. Defaults are Flink 2.3's."""

from __future__ import annotations

import datetime
from typing import Any, Protocol

from changeflow.config.durations import format_duration
from changeflow.config.options import ConfigOption, OptionType, register

TABLE_EXEC_MINI_BATCH_ENABLED = register(
    ConfigOption(
        "table.exec.mini-batch.enabled",
        OptionType.BOOLEAN,
        False,
        description=(
            "Whether stateful operators buffer input and fold it per key before touching "
            "state (mini-batch): one state read and write per key per bundle and fewer output "
            "changes, at the cost of latency. Off by default. When on, "
            "table.exec.mini-batch.allow-latency and table.exec.mini-batch.size must both be "
            "positive."
        ),
    )
)

TABLE_EXEC_MINI_BATCH_ALLOW_LATENCY = register(
    ConfigOption(
        "table.exec.mini-batch.allow-latency",
        OptionType.DURATION,
        "0 ms",
        description=(
            "The longest time a mini-batch may buffer input before it is processed. A bundle "
            "ends when this time has passed or when table.exec.mini-batch.size records are "
            "buffered, whichever comes first. Must be greater than zero when mini-batch is "
            "enabled."
        ),
    )
)

TABLE_EXEC_MINI_BATCH_SIZE = register(
    ConfigOption(
        "table.exec.mini-batch.size",
        OptionType.LONG,
        -1,
        description=(
            "The most input records a mini-batch may buffer; reaching it ends the bundle. "
            "Must be positive when mini-batch is enabled (-1, the default, means unset)."
        ),
    )
)

TABLE_DML_SYNC = register(
    ConfigOption(
        "table.dml-sync",
        OptionType.BOOLEAN,
        False,
        description=(
            "Whether execute_sql of an INSERT (and a statement set's execute) returns only when its "
            "job has finished, raising the job's error, as Flink's; false returns once the job runs."
        ),
    )
)

TABLE_OPTIMIZER_AGG_PHASE_STRATEGY = register(
    ConfigOption(
        "table.optimizer.agg-phase-strategy",
        OptionType.ENUM,
        "AUTO",
        allowed_values=("AUTO", "ONE_PHASE", "TWO_PHASE"),
        description=(
            "How aggregations are split. ONE_PHASE aggregates in a single step after the "
            "shuffle; TWO_PHASE pre-aggregates locally before the shuffle and merges the "
            "partial results after it (used only where every aggregate function can merge); "
            "AUTO lets the planner choose."
        ),
    )
)

TABLE_OPTIMIZER_DISTINCT_AGG_SPLIT_ENABLED = register(
    ConfigOption(
        "table.optimizer.distinct-agg.split.enabled",
        OptionType.BOOLEAN,
        False,
        description=(
            "Whether a streaming group aggregation with DISTINCT aggregates runs in two levels: "
            "a partial aggregation by the group keys plus a bucket of the distinct value, and a "
            "final aggregation by the group keys combining the partial results. It spreads a hot "
            "key's distinct values over buckets; results are the same."
        ),
    )
)

TABLE_OPTIMIZER_DISTINCT_AGG_SPLIT_BUCKET_NUM = register(
    ConfigOption(
        "table.optimizer.distinct-agg.split.bucket-num",
        OptionType.INT,
        1024,
        description="The number of buckets a split distinct aggregation spreads each key's distinct values over.",
        min_value=1,
    )
)

TABLE_EXEC_SOURCE_CDC_EVENTS_DUPLICATE = register(
    ConfigOption(
        "table.exec.source.cdc-events-duplicate",
        OptionType.BOOLEAN,
        False,
        description=(
            "Whether a source with a PRIMARY KEY that produces a changelog (a CDC format, "
            "from_changelog_stream) may deliver duplicated change events. When true the planner "
            "puts a ChangelogNormalize keyed by the primary key after such a source, which keeps "
            "the last row per key and drops the duplicates (stateful)."
        ),
    )
)

TABLE_EXEC_STATE_TTL = register(
    ConfigOption(
        "table.exec.state.ttl",
        OptionType.DURATION,
        "0 ms",
        description=(
            "How long state for a key may sit idle (not updated) before it may be cleared. "
            "State is kept at least this long and cleared some time after. 0 ms, the default, "
            "keeps state forever."
        ),
    )
)



class _ReadsOptions(Protocol):
    def get_option(self, option: ConfigOption) -> Any: ...


def validate_mini_batch(conf: _ReadsOptions) -> None:
    """Check the mini-batch keys together, as Flink's planner does when it plans a query.

    With ``table.exec.mini-batch.enabled`` true, both ``table.exec.mini-batch.allow-latency``
    and ``table.exec.mini-batch.size`` must be greater than zero. Raises ``ValueError``
    listing every problem; does nothing when mini-batch is off.
    """
    if not conf.get_option(TABLE_EXEC_MINI_BATCH_ENABLED):
        return
    problems = []
    latency = conf.get_option(TABLE_EXEC_MINI_BATCH_ALLOW_LATENCY)
    if latency <= datetime.timedelta(0):
        problems.append(
            f"{TABLE_EXEC_MINI_BATCH_ALLOW_LATENCY.key} must be greater than 0 ms "
            f"(it is {format_duration(latency)})"
        )
    size = conf.get_option(TABLE_EXEC_MINI_BATCH_SIZE)
    if size <= 0:
        problems.append(f"{TABLE_EXEC_MINI_BATCH_SIZE.key} must be > 0 (it is {size})")
    if problems:
        raise ValueError(
            f"{TABLE_EXEC_MINI_BATCH_ENABLED.key} is true, but " + "; and ".join(problems) + "."
        )
