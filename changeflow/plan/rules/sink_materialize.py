"""Materializer insertion: where an INSERT needs the sink upsert materializer, and its checks.

A sink with a primary key receives upserts by that key. When the query's
changes are keyed differently (its upsert keys, :mod:`changeflow.plan.rules.upsert_keys`,
do not lie within the primary key), changes for one primary key travel on
different paths and can overtake each other; the sink upsert materializer
(:class:`~changeflow.plan.nodes.UpsertMaterialize`, FLIP-558) keeps each
key's history and reconciles them. :func:`plan_sink` applies Flink 2.3's
rules, checked against PyFlink 2.3's planner:

``table.exec.sink.upsert-materialize``
    ``AUTO`` (default): a materializer exactly when the sink has a primary key,
    accepts updates, the query's changelog is updating, and no upsert key of
    the query lies within the primary key. ``FORCE``: whenever the sink has a
    primary key (also over an insert-only query). ``NONE``: never (an ON
    CONFLICT clause is then accepted and has no effect, as in Flink).
``table.exec.sink.require-on-conflict`` (default true)
    under ``AUTO``, an INSERT that needs the materializer must say how
    conflicts resolve (``ON CONFLICT DO DEDUPLICATE | DO NOTHING | DO ERROR``);
    without a clause it fails at planning, naming the primary key and the
    upsert key. ``FORCE`` and ``NONE`` do not require it (Flink 2.3 neither).
``ON CONFLICT``
    only for an updating query (Flink: "only allowed for upsert sinks");
    ``DO NOTHING`` and ``DO ERROR`` need a watermark on every source table, as
    Flink's watermark-compacting materializer does (changeflow decides
    conflicts at micro-batch boundaries instead, see the kernel, but rejects
    the same statements). Without a clause the materializer deduplicates.

Batch mode never materializes (a batch query's result is final) and accepts
any ON CONFLICT clause, as Flink's batch planner does.

The rule (:func:`apply`) runs first, on the logical plan, so that the
materializers it inserts are annotated by the rules after it. An INSERT
statement applies it to its sink when planned (:func:`plan_sink`, so that its
errors come with the statement, as in Flink); the rule leaves a sink that has
its materializer already as it is.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from changeflow.plan.nodes import PlanNode, Sink, Source, UpsertMaterialize, sources
from changeflow.plan.physical import rewrite
from changeflow.plan.rules import Rule, changelog_mode
from changeflow.plan.rules.upsert_keys import contains_key, upsert_keys
from changeflow.plan.type_inference import PlanError

CONFLICT_MODES = ("DEDUPLICATE", "NOTHING", "ERROR")


@dataclass(frozen=True)
class MaterializeSettings:
    """The options that decide and configure the sink upsert materializer."""

    streaming: bool = True
    mode: str = "AUTO"                 # table.exec.sink.upsert-materialize
    require_on_conflict: bool = True   # table.exec.sink.require-on-conflict
    strategy: str = "LEGACY"           # table.exec.sink.upsert-materialize-strategy.type
    threshold_high: int = 50           # ...adaptive.threshold.high
    threshold_low: int = 40            # ...adaptive.threshold.low
    ttl_ms: int = 0                    # table.exec.state.ttl

    @staticmethod
    def from_configuration(conf: Any, streaming: bool) -> "MaterializeSettings":
        """The settings of a :class:`~changeflow.common.configuration.Configuration`."""
        from changeflow.config import to_millis

        return MaterializeSettings(
            streaming=streaming,
            mode=str(conf.get("table.exec.sink.upsert-materialize")),
            require_on_conflict=bool(conf.get("table.exec.sink.require-on-conflict")),
            strategy=str(conf.get("table.exec.sink.upsert-materialize-strategy.type")),
            threshold_high=int(conf.get("table.exec.sink.upsert-materialize-strategy.adaptive.threshold.high")),
            threshold_low=int(conf.get("table.exec.sink.upsert-materialize-strategy.adaptive.threshold.low")),
            ttl_ms=to_millis(conf.get("table.exec.state.ttl")))


def apply(plan: PlanNode, settings: Any) -> PlanNode:
    """The rule: :func:`plan_sink` on every sink of ``plan`` not planned yet (``settings.materialize`` None: none)."""
    if settings.materialize is None:
        return plan
    return rewrite(plan, lambda node: plan_sink(node, settings.materialize)
                   if isinstance(node, Sink) and not isinstance(node.input, UpsertMaterialize) else node)


def plan_sink(sink: Sink, settings: MaterializeSettings) -> Sink:
    """``sink`` checked against its ``ON CONFLICT`` clause, with a materializer before it where needed.

    Raises :class:`PlanError` for a statement Flink 2.3 rejects: an ON
    CONFLICT clause over an insert-only query, DO NOTHING / DO ERROR over a
    source without a watermark, or (``require-on-conflict``) a missing clause
    where the materializer is needed.

    >>> from changeflow.common.types import DataTypes as T
    >>> from changeflow.plan.nodes import Aggregate, Source
    >>> src = Source("t", (("k", T.INT()), ("v", T.INT())), "elements", [])
    >>> pairs = Aggregate(src, ("k", "v"), (), src.schema)   # SELECT DISTINCT k, v: upsert key (k, v)
    >>> plan_sink(Sink(pairs, "snk", None, ("k", "v")), MaterializeSettings()).input is pairs
    True
    >>> node = plan_sink(Sink(pairs, "snk", None, ("k",), conflict="DEDUPLICATE"), MaterializeSettings()).input
    >>> node.primary_key, node.upsert_key, node.conflict
    (('k',), ('k', 'v'), 'DEDUPLICATE')
    """
    if sink.conflict is not None and sink.conflict not in CONFLICT_MODES:
        raise PlanError(f"unknown ON CONFLICT mode {sink.conflict!r}; expected DO DEDUPLICATE, DO NOTHING or "
                        f"DO ERROR")
    if not settings.streaming:
        return sink
    insert_only = changelog_mode.mode_of(sink.input).insert_only
    if sink.conflict is not None:
        if insert_only:
            raise PlanError(f"ON CONFLICT clause is only allowed for upsert sinks. The sink '{sink.table}' is not "
                            f"an upsert sink because it only accepts INSERT (append-only) changes: the query "
                            f"produces no updates, so no two of its rows can conflict")
        if sink.conflict != "DEDUPLICATE":
            _require_watermarks(sink)
    keys = upsert_keys(sink.input)
    if not _needs_materializer(sink, settings, insert_only, keys):
        return sink
    if settings.mode == "AUTO" and sink.conflict is None and settings.require_on_conflict:
        raise PlanError(
            f"The query has an upsert key that differs from the primary key of the sink table '{sink.table}'. "
            f"Primary key: [{', '.join(sink.primary_key)}], upsert key: {_describe_keys(keys)}. Rows with "
            f"different upsert keys may map to one primary key, and the result would depend on their arrival "
            f"order. Add ON CONFLICT DO DEDUPLICATE (keep every row's history and show the latest; state "
            f"intensive), ON CONFLICT DO ERROR (fail on a conflict) or ON CONFLICT DO NOTHING (keep the first "
            f"row), or set table.exec.sink.require-on-conflict to false")
    if settings.strategy == "ADAPTIVE" and not settings.threshold_low < settings.threshold_high:
        raise PlanError(
            f"table.exec.sink.upsert-materialize-strategy.adaptive.threshold.low ({settings.threshold_low}) must "
            f"be below table.exec.sink.upsert-materialize-strategy.adaptive.threshold.high "
            f"({settings.threshold_high})")
    node = UpsertMaterialize(sink.input, sink.primary_key, _smallest(keys), conflict=sink.conflict or "DEDUPLICATE",
                             strategy=settings.strategy, threshold_high=settings.threshold_high,
                             threshold_low=settings.threshold_low, ttl_ms=settings.ttl_ms)
    return replace(sink, input=node)


def _needs_materializer(sink: Sink, settings: MaterializeSettings, insert_only: bool, keys) -> bool:
    # An append-only sink (filesystem) can take no upserts, so no materializer feeds it.
    if not sink.primary_key or settings.mode == "NONE" or not getattr(sink.connector, "accepts_updates", True):
        return False
    if settings.mode == "FORCE":
        return True
    if insert_only:
        return False
    return not contains_key(keys, sink.primary_key)


def _smallest(keys) -> tuple[str, ...] | None:
    """The key the materializer identifies rows by: the smallest upsert key (Flink's choice), None for none."""
    if not keys:
        return None
    key = min(keys, key=lambda k: (len(k), k))
    return key or None  # the empty key (one row at a time): rows are told apart by all columns


def _describe_keys(keys) -> str:
    if not keys:
        return "none (the query's changes have no unique key)"
    return ", ".join(f"[{', '.join(k)}]" for k in keys)


def source_name(source: Source) -> str:
    """A source as Flink names it: ``default_catalog.default_database.t`` for a catalog table."""
    name = source.name
    if name.startswith("[") and name.endswith("]"):
        return name[1:-1].replace(", ", ".")
    return name


def _require_watermarks(sink: Sink) -> None:
    missing = [source_name(s) for s in sources(sink.input) if _watermark(s) is None]
    if missing:
        raise PlanError(f"ON CONFLICT DO {sink.conflict} requires all source tables to define watermarks, but the "
                        f"following source(s) do not: {', '.join(missing)}. Please add a WATERMARK declaration to "
                        f"these tables")


def _watermark(source: Source):
    """The ``WATERMARK`` declared on a catalog table's source (None for other sources)."""
    table = getattr(source.payload, "table", None)
    schema = getattr(table, "schema", None)
    return getattr(schema, "watermark", None)



RULE = Rule("sink_materialize", 10, apply, ())  # inserts nodes: runs before any annotation

__all__ = ["CONFLICT_MODES", "MaterializeSettings", "apply", "plan_sink", "source_name", "sources"]
