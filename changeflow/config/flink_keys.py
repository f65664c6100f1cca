"""Real Flink 2.3 configuration keys that changeflow does not register, and what it does with them.

A Flink program ported to changeflow often carries Flink keys that have no meaning on Spark
(task manager memory, REST ports, checkpoint intervals, operator chaining). Rejecting them as
unknown would make every port fail for nothing, so they are *known*:

- ``IGNORED``: keys whose setting cannot change what a changeflow job computes (resources,
  deployment, plan-choice hints). They are accepted, kept as strings and not read.
- ``UNSUPPORTED``: keys that would change results (or lose data the user expects kept) and
  that changeflow does not implement. Setting one to anything but Flink's default is an error
  naming the key; Flink's default is accepted, since it asks for what changeflow does anyway.
- ``FLINK_ONLY_NAMESPACES``: whole namespaces that only configure Flink's own processes
  (``taskmanager.``, ``rest.``, ``state.``, ``python.`` ...). Any key under one is accepted and
  ignored, except the few listed in ``UNSUPPORTED``.

The key names are Flink's (its generated configuration reference); the lists need not be
complete for correctness: a key missing here is an unknown key, which is an error under the
prefixes changeflow checks and a misspelling check anywhere else
(:func:`changeflow.config.options.check_key`).
"""

from __future__ import annotations

import dataclasses

from changeflow.config.durations import parse_duration

__all__ = ["FLINK_ONLY_NAMESPACES", "IGNORED", "SPARK_KEYS", "UNSUPPORTED", "FlinkKey", "flink_key",
           "known_spellings"]


@dataclasses.dataclass(frozen=True)
class FlinkKey:
    """A Flink key changeflow knows but does not register: ``ignored`` or refused unless ``default``."""

    key: str
    ignored: bool
    default: str | None = None  # UNSUPPORTED only: Flink's default, the one value accepted
    note: str = ""  # UNSUPPORTED only: what to do instead
    listed: bool = True  # False: not listed, but under a Flink-only namespace

    def accepts(self, value: object) -> bool:
        """Whether setting this key to ``value`` is accepted (always, for an ignored key)."""
        if self.ignored:
            return True
        if self.default is None:
            return False
        text = str(value).lower() if isinstance(value, bool) else str(value)
        if _normal(text) == _normal(self.default):
            return True
        try:  # "0", "0 s" and "0 ms" are all Flink's default "0 ms"
            return parse_duration(text) == parse_duration(self.default)
        except ValueError:
            return False


def _normal(text: str) -> str:
    return "".join(text.split()).lower()


# Keys under these namespaces configure Flink's processes only; none changes a changeflow result.
FLINK_ONLY_NAMESPACES = (
    "akka.", "blob.", "classloader.", "client.", "cluster.", "deployment.", "env.", "external-resource.",
    "fs.", "heartbeat.", "high-availability.", "historyserver.", "io.tmp.dirs", "jmx.", "jobmanager.",
    "jobstore.", "kubernetes.", "metrics.", "pekko.", "python.", "queryable-state.", "resourcemanager.",
    "rest.", "restart-strategy.", "security.", "slot.", "slotmanager.", "sql-client.", "sql-gateway.",
    "state.", "taskmanager.", "web.", "workflow-scheduler.", "yarn.", "zookeeper.",
)

_IGNORED_KEYS = (
    # pipeline.* (pipeline.name is registered: it names checkpoints)
    "pipeline.auto-generate-uids", "pipeline.auto-watermark-interval", "pipeline.classpaths",
    "pipeline.closure-cleaner-level", "pipeline.force-avro", "pipeline.force-kryo", "pipeline.generic-types",
    "pipeline.jars", "pipeline.jobvertex-parallelism-overrides", "pipeline.max-parallelism",
    "pipeline.object-reuse", "pipeline.operator-chaining.chain-operators-with-different-max-parallelism",
    "pipeline.operator-chaining.enabled", "pipeline.serialization-config", "pipeline.vertex-description-mode",
    "pipeline.vertex-name-include-index-prefix", "pipeline.watermark-alignment.allow-unaligned-source-splits",
    # execution.*: Spark commits every micro-batch; Flink's checkpoint tuning has nothing to tune
    "execution.attached", "execution.buffer-timeout", "execution.buffer-timeout.enabled",
    "execution.buffer-timeout.interval", "execution.shutdown-on-attached-exit", "execution.target",
    "execution.batch-shuffle-mode", "execution.sorted-inputs.enabled", "execution.sort-partition.memory",
    "execution.sort-keyed-partition.memory", "execution.checkpointing.interval", "execution.checkpointing.mode",
    "execution.checkpointing.timeout", "execution.checkpointing.min-pause",
    "execution.checkpointing.max-concurrent-checkpoints", "execution.checkpointing.tolerable-failed-checkpoints",
    "execution.checkpointing.externalized-checkpoint-retention", "execution.checkpointing.unaligned.enabled",
    "execution.checkpointing.unaligned", "execution.checkpointing.aligned-checkpoint-timeout",
    "execution.checkpointing.num-retained", "execution.checkpointing.incremental",
    "execution.checkpointing.snapshot-compression", "execution.checkpointing.interval-during-backlog",
    "execution.checkpointing.checkpoints-after-tasks-finish", "execution.checkpointing.create-subdir",
    "execution.checkpointing.cleaner.parallel-mode", "execution.checkpointing.storage",
    "execution.checkpointing.file-merging.enabled", "execution.checkpointing.local-backup.enabled",
    "execution.checkpointing.write-buffer-size", "execution.checkpointing.data-inline-threshold",
    # table.*: resources, operator names and uids, plan choices that do not change results
    "table.exec.async-lookup.buffer-capacity", "table.exec.async-lookup.key-ordered-enabled",
    "table.exec.async-lookup.output-mode", "table.exec.async-lookup.timeout",
    "table.exec.async-ml-predict.max-concurrent-operations", "table.exec.async-ml-predict.output-mode",
    "table.exec.async-ml-predict.timeout", "table.exec.async-scalar.max-attempts",
    "table.exec.async-scalar.max-concurrent-operations", "table.exec.async-scalar.retry-delay",
    "table.exec.async-scalar.retry-strategy", "table.exec.async-scalar.timeout", "table.exec.async-state.enabled",
    "table.exec.async-table.max-concurrent-operations", "table.exec.async-table.max-retries",
    "table.exec.async-table.retry-delay", "table.exec.async-table.retry-strategy", "table.exec.async-table.timeout",
    "table.exec.disabled-operators", "table.exec.local-hash-agg.adaptive.distinct-value-rate-threshold",
    "table.exec.local-hash-agg.adaptive.enabled", "table.exec.local-hash-agg.adaptive.sampling-threshold",
    "table.exec.operator-fusion-codegen.enabled", "table.exec.rank.topn-cache-size",
    "table.exec.resource.default-parallelism", "table.exec.simplify-operator-name-enabled",
    "table.exec.sink.keyed-shuffle", "table.exec.sink.rowtime-inserter", "table.exec.sort.async-merge-enabled",
    "table.exec.sort.max-num-file-handles", "table.exec.spill-compression.block-size",
    "table.exec.spill-compression.enabled", "table.exec.uid.format", "table.exec.uid.generation",
    "table.exec.window-agg.buffer-size-limit", "table.optimizer.join-reorder-enabled",
    "table.optimizer.bushy-join-reorder-threshold", "table.optimizer.distinct-agg.split.enabled",
    "table.optimizer.distinct-agg.split.bucket-num", "table.optimizer.reuse-sub-plan-enabled",
    "table.optimizer.reuse-source-enabled", "table.optimizer.reuse-sink-enabled",
    "table.optimizer.reuse-optimize-block-with-digest-enabled", "table.optimizer.source.report-statistics-enabled",
    "table.optimizer.source.predicate-pushdown-enabled", "table.optimizer.source.aggregate-pushdown-enabled",
    "table.optimizer.multiple-input-enabled", "table.optimizer.dynamic-filtering.enabled",
    "table.optimizer.runtime-filter.enabled", "table.optimizer.join.broadcast-threshold",
    "table.optimizer.incremental-agg-enabled", "table.optimizer.sql2rel.project-merge.enabled",
    "table.optimizer.union-all-as-breakpoint-enabled", "table.optimizer.adaptive-broadcast-join.strategy",
    "table.optimizer.skewed-join-optimization.strategy", "table.optimizer.skewed-join-optimization.skewed-factor",
    "table.optimizer.skewed-join-optimization.skewed-threshold", "table.optimizer.delta-join.strategy",
    "table.generated-code.max-length", "table.generated-code.max-members", "table.resources.download-dir",
    "table.catalog-modification.listeners", "table.dynamic-table-options.enabled",
    "table.rtas-ctas.atomicity-enabled", "table.display.max-column-width",
    # Flink-only namespaces: a few common keys, so that their misspellings get a suggestion
    "taskmanager.numberoftaskslots", "taskmanager.memory.process.size", "taskmanager.memory.flink.size",
    "taskmanager.memory.managed.fraction", "jobmanager.memory.process.size", "jobmanager.rpc.address",
    "rest.port", "rest.address", "rest.bind-port", "state.backend.type", "state.backend.incremental",
    "state.savepoints.dir", "python.executable", "python.client.executable", "python.files",
    "python.requirements", "python.fn-execution.bundle.size", "restart-strategy.type",
    "restart-strategy.fixed-delay.attempts", "restart-strategy.fixed-delay.delay",
    "high-availability.type", "high-availability.storagedir", "metrics.reporters",
)

_UNSUPPORTED = (
    FlinkKey("execution.savepoint.path", False, None,
             "changeflow cannot restore a Flink savepoint; a job resumes from its own checkpoint "
             "under changeflow.checkpoint-dir"),
    FlinkKey("execution.savepoint.ignore-unclaimed-state", False, "false"),
    FlinkKey("execution.savepoint-restore-mode", False, "NO_CLAIM"),
    FlinkKey("execution.checkpointing.dir", False, None,
             "set changeflow.checkpoint-dir: jobs keep their checkpoints there and resume from them"),
    FlinkKey("execution.checkpointing.savepoint-dir", False, None, "changeflow takes no savepoints"),
    FlinkKey("state.checkpoints.dir", False, None,
             "set changeflow.checkpoint-dir: jobs keep their checkpoints there and resume from them"),
    FlinkKey("pipeline.cached-files", False, None, "ship files to Spark executors with SparkContext.addFile"),
    FlinkKey("table.exec.deduplicate.insert-update-after-sensitive-enabled", False, "true"),
    FlinkKey("table.exec.deduplicate.mini-batch.compact-changes-enabled", False, "false"),
    FlinkKey("table.exec.interval-join.min-cleanup-interval", False, "0 ms"),
    FlinkKey("table.exec.legacy-cast-behaviour", False, "DISABLED"),
    FlinkKey("table.exec.sink.type-length-enforcer", False, "IGNORE"),
    FlinkKey("table.exec.sink.nested-constraint-enforcer", False, "IGNORE"),
    FlinkKey("table.exec.sort.default-limit", False, "-1"),
    FlinkKey("table.exec.source.cdc-events-duplicate", False, "false"),
    FlinkKey("table.exec.source.idle-timeout", False, "0 ms"),
    FlinkKey("table.exec.emit.early-fire.enabled", False, "false"),
    FlinkKey("table.exec.emit.early-fire.delay", False, None),
    FlinkKey("table.exec.emit.late-fire.enabled", False, "false"),
    FlinkKey("table.exec.emit.late-fire.delay", False, None),
    FlinkKey("table.exec.emit.allow-lateness", False, None),
    FlinkKey("table.optimizer.non-deterministic-update.strategy", False, "IGNORE"),
    FlinkKey("table.local-time-zone", False, "default",
             "changeflow evaluates time functions in UTC: its queries run with "
             "spark.sql.session.timeZone = UTC, also on a session you pass in"),
    FlinkKey("table.sql-dialect", False, "default"),
    FlinkKey("table.dml-sync", False, "false"),
    FlinkKey("table.builtin-catalog-name", False, "default_catalog"),
    FlinkKey("table.builtin-database-name", False, "default_database"),
    FlinkKey("table.column-expansion-strategy", False, ""),
    FlinkKey("table.plan.compile.catalog-objects", False, None),
    FlinkKey("table.plan.restore.catalog-objects", False, None),
    FlinkKey("table.plan.force-recompile", False, None),
)

IGNORED: dict[str, FlinkKey] = {key: FlinkKey(key, True) for key in _IGNORED_KEYS}
UNSUPPORTED: dict[str, FlinkKey] = {k.key: k for k in _UNSUPPORTED}

# Common Spark keys: only to suggest the right spelling of a misspelt one (spark.* passes through).
SPARK_KEYS = (
    "spark.master", "spark.app.name", "spark.driver.memory", "spark.executor.memory", "spark.executor.cores",
    "spark.executor.instances", "spark.default.parallelism", "spark.sql.shuffle.partitions",
    "spark.sql.session.timezone", "spark.sql.adaptive.enabled", "spark.sql.streaming.checkpointlocation",
    "spark.sql.streaming.statestore.providerclass", "spark.local.dir",
)


def flink_key(key: str) -> FlinkKey | None:
    """The catalog entry for ``key`` (lower-cased), or a generic ignored one under a Flink-only namespace.

    >>> flink_key("pipeline.auto-watermark-interval").ignored
    True
    >>> flink_key("taskmanager.memory.task.heap.size").ignored
    True
    >>> flink_key("state.checkpoints.dir").ignored
    False
    >>> flink_key("tabel.exec.mini-batch.enabled") is None
    True
    """
    text = key.strip().lower()
    entry = UNSUPPORTED.get(text) or IGNORED.get(text)
    if entry is not None:
        return entry
    if text.startswith(FLINK_ONLY_NAMESPACES):
        return FlinkKey(text, True, listed=False)
    return None


def known_spellings() -> tuple[str, ...]:
    """Every key of the catalog and the Spark list, lower-cased: candidates for a misspelt key."""
    return tuple(IGNORED) + tuple(UNSUPPORTED) + SPARK_KEYS
