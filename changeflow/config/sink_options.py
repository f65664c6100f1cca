"""Flink's ``table.exec.sink.*`` keys: when the sink upsert materializer runs (SinkUpsertMaterializerV2,
FLINK-38461 / FLIP-558), its strategy and thresholds, ON CONFLICT and NOT NULL enforcement. Defaults are
Flink 2.3's."""

from __future__ import annotations

from changeflow.config.options import ConfigOption, OptionType, register

TABLE_EXEC_SINK_UPSERT_MATERIALIZE = register(
    ConfigOption(
        "table.exec.sink.upsert-materialize",
        OptionType.ENUM,
        "AUTO",
        allowed_values=("NONE", "AUTO", "FORCE"),
        description=(
            "Whether an upsert materializer runs before an upsert sink to put a changelog that "
            "a shuffle may have reordered back in order per primary key. AUTO adds it where "
            "the planner cannot prove the order is kept; NONE never adds it; FORCE always "
            "adds it."
        ),
    )
)

TABLE_EXEC_SINK_UPSERT_MATERIALIZE_STRATEGY_TYPE = register(
    ConfigOption(
        "table.exec.sink.upsert-materialize-strategy.type",
        OptionType.ENUM,
        "LEGACY",  # Flink 2.3's default (and FLIP-558's): new strategies are opt-in
        allowed_values=("LEGACY", "VALUE", "MAP", "ADAPTIVE"),
        # FLIP-558 spells the key this way; Flink shipped the name above.
        fallback_keys=("table.exec.sink.upsert-materialize.strategy",),
        description=(
            "How the sink upsert materializer keeps each key's history (SinkUpsertMaterializerV2, "
            "FLINK-38461 / FLIP-558). LEGACY: one "
            "list per key, fine for short histories, per-key TTL only. VALUE: like LEGACY but "
            "compatible with MAP. MAP: ordered per-key state with O(1) work per record on long "
            "histories. ADAPTIVE: starts as VALUE and switches a key to MAP when its history "
            "reaches the high threshold, and back below the low one."
        ),
    )
)

TABLE_EXEC_SINK_UPSERT_MATERIALIZE_STRATEGY_ADAPTIVE_THRESHOLD_HIGH = register(
    ConfigOption(
        "table.exec.sink.upsert-materialize-strategy.adaptive.threshold.high",
        OptionType.LONG,
        50,
        min_value=1,
        fallback_keys=("table.exec.sink.upsert-materialize.adaptive.threshold.high",),
        description=(
            "With the ADAPTIVE strategy, the number of history entries for a key at which it "
            "switches from VALUE to MAP. Flink's default depends on the state backend; 50 is "
            "its RocksDB value, the backend changeflow's streaming state uses."
        ),
    )
)

TABLE_EXEC_SINK_UPSERT_MATERIALIZE_STRATEGY_ADAPTIVE_THRESHOLD_LOW = register(
    ConfigOption(
        "table.exec.sink.upsert-materialize-strategy.adaptive.threshold.low",
        OptionType.LONG,
        40,
        min_value=0,
        fallback_keys=("table.exec.sink.upsert-materialize.adaptive.threshold.low",),
        description=(
            "With the ADAPTIVE strategy, the number of history entries for a key at which it "
            "switches back from MAP to VALUE. Flink's RocksDB default is 40. Must be below the "
            "high threshold (checked when an INSERT is planned)."
        ),
    )
)

TABLE_EXEC_SINK_REQUIRE_ON_CONFLICT = register(
    ConfigOption(
        "table.exec.sink.require-on-conflict",
        OptionType.BOOLEAN,
        True,
        description=(
            "Whether an INSERT into an upsert sink must carry an ON CONFLICT clause when the "
            "query's upsert key differs from the sink's primary key. When true (the default) "
            "such a statement fails at planning; false restores the older behaviour, whose "
            "results may depend on arrival order."
        ),
    )
)

TABLE_EXEC_SINK_NOT_NULL_ENFORCER = register(
    ConfigOption(
        "table.exec.sink.not-null-enforcer",
        OptionType.ENUM,
        "ERROR",
        allowed_values=("ERROR", "DROP"),
        description=(
            "What an INSERT does with a NULL written into a NOT NULL column of the sink table "
            "(a PRIMARY KEY column is NOT NULL): ERROR (the default) fails the job naming the "
            "column and the change; DROP drops the change silently. As Flink's option."
        ),
    )
)
