"""Every Flink 2.3 configuration key, and what changeflow does with the ones it does not register.

A Flink program ported to changeflow often carries Flink keys that have no meaning on Spark
(task manager memory, REST ports, checkpoint intervals, operator chaining). Rejecting them as
unknown would make every port fail for nothing, so they are *known*:

- ``IGNORED``: every configuration key of Flink 2.3 (with its deprecated and fallback
  spellings) that changeflow neither registers nor refuses. The list is generated from Flink's
  jars (``flink_options.tsv`` beside this module, by ``scripts/generate_flink_catalog.py``).
  Such a key is accepted, kept as a string and not read: it has no effect on Spark, and
  EXPLAIN says so (:func:`no_effect_keys`).
- ``UNSUPPORTED``: keys that would change results (or lose data the user expects kept) and
  that changeflow does not implement. Setting one to anything but Flink's default is an error
  naming the key; Flink's default is accepted, since it asks for what changeflow does anyway.
- ``FLINK_ONLY_NAMESPACES``: whole namespaces that only configure Flink's own processes
  (``taskmanager.``, ``rest.``, ``state.``, ``python.`` ...). A key under one that is not in the
  list (a plugin's or a reporter's own key) is accepted and ignored too.

A key that is none of these is unknown: an error under the prefixes changeflow checks, and a
misspelling check anywhere else (:func:`changeflow.config.options.check_key`).
"""

from __future__ import annotations

import dataclasses
import functools
import importlib.resources
import re
from collections.abc import Iterable, Iterator, Mapping

from changeflow.config.durations import parse_duration

__all__ = ["FLINK_ONLY_NAMESPACES", "IGNORED", "SPARK_KEYS", "UNSUPPORTED", "FlinkKey", "flink_key",
           "flink_options", "known_spellings", "no_effect_keys"]


@dataclasses.dataclass(frozen=True)
class FlinkKey:
    """A Flink key changeflow knows but does not register: ``ignored`` or refused unless ``default``."""

    key: str
    ignored: bool
    default: str | None = None  # UNSUPPORTED only: Flink's default, the one value accepted
    note: str = ""  # UNSUPPORTED only: what to do instead
    listed: bool = True  # False: not listed, but under a Flink-only namespace
    primary: str = ""  # a deprecated or fallback spelling: the key Flink reads it as
    accepted: str = ""  # UNSUPPORTED only: the values accepted, when more than Flink's default

    def accepts(self, value: object) -> bool:
        """Whether setting this key to ``value`` is accepted (always, for an ignored key)."""
        if self.ignored:
            return True
        if self.key == "table.local-time-zone":
            from changeflow.config.time_zone import check_local_time_zone  # Flink's validation

            return check_local_time_zone(str(value))
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
    FlinkKey("table.exec.source.idle-timeout", False, "0 ms"),
    FlinkKey("table.exec.emit.early-fire.enabled", False, "false"),
    FlinkKey("table.exec.emit.early-fire.delay", False, None),
    FlinkKey("table.exec.emit.late-fire.enabled", False, "false"),
    FlinkKey("table.exec.emit.late-fire.delay", False, None),
    FlinkKey("table.exec.emit.allow-lateness", False, None),
    FlinkKey("table.optimizer.non-deterministic-update.strategy", False, "IGNORE"),
    # Not refused: accepts() takes every zone Flink takes (plan/time_zone.py computes in it, or refuses
    # by name a construct it does not compute in a zone other than UTC).
    FlinkKey("table.local-time-zone", False, "default", accepted="every zone Flink 2.3 accepts is accepted"),
    FlinkKey("table.sql-dialect", False, "default"),
    FlinkKey("table.builtin-catalog-name", False, "default_catalog"),
    FlinkKey("table.builtin-database-name", False, "default_database"),
    FlinkKey("table.column-expansion-strategy", False, ""),
    FlinkKey("table.plan.compile.catalog-objects", False, None),
    FlinkKey("table.plan.restore.catalog-objects", False, None),
    FlinkKey("table.plan.force-recompile", False, None),
)

UNSUPPORTED: dict[str, FlinkKey] = {k.key: k for k in _UNSUPPORTED}


@dataclasses.dataclass(frozen=True)
class FlinkOption:
    """One line of ``flink_options.tsv``: a spelling of one of Flink 2.3's configuration options."""

    key: str  # as Flink spells it (``taskmanager.numberOfTaskSlots``)
    kind: str  # "key", or "deprecated" / "fallback" for another spelling of ``primary``
    primary: str
    scope: str  # "config", or "other": WITH-clause, hint, reporter-relative or planner-internal options
    default: str
    declared_in: str  # the Java class that declares it


@functools.cache
def flink_options() -> tuple[FlinkOption, ...]:
    """Every option spelling of Flink 2.3, as generated from its jars (configuration keys and others)."""
    text = importlib.resources.files("changeflow.config").joinpath("flink_options.tsv").read_text("utf-8")
    return tuple(FlinkOption(*line.split("\t")) for line in text.splitlines() if line and not line.startswith("#"))


def _is_template(key: str) -> bool:
    return "<" in key or ".#." in key


@functools.cache
def _templates() -> tuple[tuple[re.Pattern[str], str], ...]:
    # "metrics.reporter.<name>.<parameter>", "partition.fields.#.date-formatter": a placeholder
    # stands for any non-empty text.
    patterns = []
    for option in flink_options():
        if option.scope == "config" and _is_template(option.key):
            parts = re.split(r"<[^>]*>|(?<=\.)#(?=\.)", option.key.lower())
            patterns.append((re.compile(".+".join(re.escape(p) for p in parts)), option.key))
    return tuple(patterns)


@functools.cache
def _unsupported_aliases() -> dict[str, FlinkKey]:
    """Deprecated spellings of the refused keys (``state.savepoints.dir``): refused the same way."""
    return {o.key.lower(): dataclasses.replace(UNSUPPORTED[o.primary.lower()], key=o.key.lower(), primary=o.primary)
            for o in flink_options()
            if o.kind != "key" and o.primary.lower() in UNSUPPORTED and o.key.lower() not in UNSUPPORTED}


class _IgnoredKeys(Mapping[str, FlinkKey]):
    """Flink's configuration keys (lower-cased) that changeflow neither registers nor refuses.

    Built on first use, once every option module has registered its keys: a key changeflow
    registers (and acts on) is never in it.
    """

    @functools.cached_property
    def _entries(self) -> dict[str, FlinkKey]:
        from changeflow.config.options import lookup  # the registry imports this module

        entries: dict[str, FlinkKey] = {}
        for option in flink_options():
            key = option.key.lower()
            if option.scope != "config" or _is_template(key) or key in UNSUPPORTED or lookup(key) is not None:
                continue
            if key in _unsupported_aliases():
                continue
            primary = option.primary if option.kind != "key" else ""
            entries[key] = FlinkKey(key, True, primary=primary)
        return entries

    def __getitem__(self, key: str) -> FlinkKey:
        return self._entries[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._entries)

    def __len__(self) -> int:
        return len(self._entries)


IGNORED: Mapping[str, FlinkKey] = _IgnoredKeys()

# Common Spark keys: only to suggest the right spelling of a misspelt one (spark.* passes through).
SPARK_KEYS = (
    "spark.master", "spark.app.name", "spark.driver.memory", "spark.executor.memory", "spark.executor.cores",
    "spark.executor.instances", "spark.default.parallelism", "spark.sql.shuffle.partitions",
    "spark.sql.session.timezone", "spark.sql.adaptive.enabled", "spark.sql.streaming.checkpointlocation",
    "spark.sql.streaming.statestore.providerclass", "spark.local.dir",
)


def flink_key(key: str) -> FlinkKey | None:
    """The catalog entry for ``key`` (lower-cased), or a generic ignored one under a Flink-only namespace.

    >>> flink_key("pipeline.object-reuse").ignored
    True
    >>> flink_key("taskmanager.memory.task.heap.size").ignored
    True
    >>> flink_key("state.checkpoints.dir").ignored
    False
    >>> flink_key("tabel.exec.mini-batch.enabled") is None
    True
    """
    text = key.strip().lower()
    entry = UNSUPPORTED.get(text) or _unsupported_aliases().get(text) or IGNORED.get(text)
    if entry is not None:
        return entry
    for pattern, template in _templates():
        if pattern.fullmatch(text):
            return FlinkKey(text, True, primary=template)
    if text.startswith(FLINK_ONLY_NAMESPACES):
        return FlinkKey(text, True, listed=False)
    return None


def no_effect_keys(keys: Iterable[str]) -> list[str]:
    """Those of ``keys`` (as set) that are real Flink keys changeflow accepts and never reads.

    EXPLAIN lists them: setting one changes nothing on Spark.

    >>> no_effect_keys(["table.exec.mini-batch.enabled", "table.optimizer.join-reorder-enabled", "my.key"])
    ['table.optimizer.join-reorder-enabled']
    """
    from changeflow.config.options import lookup  # the registry imports this module

    found = []
    for key in keys:
        if lookup(key) is not None:
            continue
        entry = flink_key(key)
        if entry is not None and entry.ignored and key not in found:
            found.append(key)
    return sorted(found)


def known_spellings() -> tuple[str, ...]:
    """Every key of the catalog and the Spark list, lower-cased: candidates for a misspelt key."""
    return tuple(IGNORED) + tuple(UNSUPPORTED) + SPARK_KEYS
