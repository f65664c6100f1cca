"""EXPLAIN: the physical plan as a tree, each operator with its changelog mode and settings.

It prints the planner's annotations (:mod:`changeflow.plan.optimizer`) and derives none itself, in the
shape of Flink 2.3's physical plan with ``ExplainDetail.CHANGELOG_MODE``: one line per operator, children
below it (``:-`` for all but the last child, ``+-`` for the last), an ``Exchange`` wherever rows are shuffled
by key, a ``MiniBatchAssigner`` above each source under mini-batch. Operators carry Flink's attributes:

* a two-phase aggregation (:mod:`changeflow.plan.rules.agg_phase`) prints as
  ``GlobalGroupAggregate`` above the exchange merging the partial
  accumulators (``count$0``, ``sum$1``...) that ``LocalGroupAggregate``
  computes below it;
* ``Join(joinType=[LeftOuterJoin], where=[...], select=[...],
  leftInputSpec=[...], rightInputSpec=[...])`` with each input's unique-key
  spec (``NoUniqueKey``, ``HasUniqueKey``, ``JoinKeyContainsUniqueKey``) and
  ``miniBatch=[true]`` under mini-batch;
* ``Rank(strategy=[...], rankType=[ROW_NUMBER], rankRange=[rankStart=1,
  rankEnd=3], partitionBy=[...], orderBy=[v DESC], select=[...])`` and
  ``Deduplicate(keep=[LastRow], key=[...], order=[PROCTIME],
  outputInsertOnly=[false])`` (Flink's execution-plan name, which says
  what runs), with ``strategy=[RetractStrategy]`` (changeflow's, after
  Rank's) when its input retracts: Flink refuses that, changeflow keeps
  each key's live rows (:mod:`changeflow.kernels.rank.deduplicate_retract`);
* ``Sink(table=[...], fields=[...], changelogMode=[NONE])``; for an updating
  input, the upsert keys the plan proves (``upsertKeys=[[k]]``, which Flink
  derives but prints only in its plan tests); ``upsertMaterialize=[true]``
  where the planner put the sink upsert materializer before the sink and
  ``conflictStrategy=[DEDUPLICATE]`` for an ``ON CONFLICT`` clause, as Flink
  prints them;
* the materializer below the sink, ``SinkMaterializer(pk=[k], upsertKey=[u], strategy=[LEGACY],
  conflict=[DEDUPLICATE])`` (Flink's name; Flink shows it only in its JSON execution plan) above an
  ``Exchange`` by the primary key, with the ADAPTIVE thresholds and the state TTL where they apply;
* every stateful operator's state TTL where it has one (streaming mode):
  ``stateTtl=[20000ms]`` on a group aggregation, deduplication or Top-N,
  ``leftStateTtl=[..ms], rightStateTtl=[..ms]`` on a join (0ms: that side keeps
  its state), from ``table.exec.state.ttl`` or a ``STATE_TTL`` hint
  (:mod:`changeflow.plan.rules.state_ttl`). Flink shows these only in its compiled
  JSON plan.

With an output flush interval (``execution.max-flush-interval``) a section
after the plan names each operator that buffers its output and why: its
output is idempotent and it is keyed (or runs on one task). Buffering
aggregations fold each micro-batch per key, as under mini-batch, so they
split into Local/GlobalGroupAggregate under the same rule. Its last line says
how often the query's micro-batches run over unbounded input: once per
interval when every row reaching the sink is buffered
(:mod:`changeflow.plan.rules.buffering`), else at the sources' pace.

A last ``== Configuration ==`` section names the real Flink keys the job sets that changeflow
accepts but never reads (:func:`changeflow.config.flink_keys.no_effect_keys`).

A group aggregation split by ``table.optimizer.distinct-agg.split.enabled``
(:mod:`changeflow.plan.rules.split_distinct`) prints as Flink's two levels,
``GroupAggregate(groupBy=[k, $f3], partialFinalType=[PARTIAL], ...)`` below
``GroupAggregate(groupBy=[k], partialFinalType=[FINAL], ...)``.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from changeflow.kernels.aggregate.local import partial_fields
from changeflow.plan import correlate
from changeflow.plan.flush_policy import FlushPolicy
from changeflow.plan.event_time import WatermarkAssigner, WindowAggregate, WindowTableFunction
from changeflow.plan.over import OverAggregate, describe_over
from changeflow.plan.window_ops import (WINDOW_OPERATORS, WindowDeduplicate, WindowRank, describe_window_op,
                                        exchange_keys)
from changeflow.kernels.aggregate.user import USER_FUNCTION
from changeflow.plan.nodes import (Aggregate, ChangelogNormalize, Deduplicate, Filter, Join, PlanNode, Project, Rank,
                                   Replicate, Sink, Sort, Source, TableAggregate, Union, UpsertMaterialize, side_inputs)
from changeflow.plan.optimizer import PlannerSettings, planned
from changeflow.plan.rules.buffering import reads_a_file_per_batch
from changeflow.plan.rules.changelog_mode import INSERT_ONLY, ChangelogMode


@dataclass(frozen=True)
class ExplainSettings:
    """The options a logical plan is planned with before it is printed (a physical plan prints as it is)."""

    streaming: bool = True
    mini_batch: bool = False
    mini_batch_latency_ms: int = 0
    mini_batch_size: int = -1
    agg_phase_strategy: str = "AUTO"
    flush_interval_ms: int | None = None   # execution.max-flush-interval
    flush_memory_only: bool = False        # execution.flush.memory-buffer-only
    state_ttl_ms: int = 0                  # table.exec.state.ttl (a STATE_TTL hint overrides it per operator)
    no_effect_keys: tuple[str, ...] = ()   # Flink keys set that changeflow accepts and never reads
    distinct_agg_split: bool = False       # table.optimizer.distinct-agg.split.enabled
    distinct_agg_split_buckets: int = 1024  # table.optimizer.distinct-agg.split.bucket-num
    cdc_events_duplicate: bool = False     # table.exec.source.cdc-events-duplicate
    time_zone: str | None = None           # table.local-time-zone

    def planner(self) -> PlannerSettings:
        flush = None if self.flush_interval_ms is None else FlushPolicy(self.flush_interval_ms, self.flush_memory_only)
        return PlannerSettings(self.streaming, self.mini_batch, self.mini_batch_latency_ms, self.mini_batch_size,
                               self.agg_phase_strategy, flush, self.state_ttl_ms,
                               distinct_agg_split=self.distinct_agg_split,
                               distinct_agg_split_buckets=self.distinct_agg_split_buckets,
                               cdc_events_duplicate=self.cdc_events_duplicate, time_zone=self.time_zone)


_JOIN_TYPES = {"INNER": "InnerJoin", "LEFT": "LeftOuterJoin", "RIGHT": "RightOuterJoin", "FULL": "FullOuterJoin"}


def explain(root: PlanNode, settings: ExplainSettings | None = None) -> str:
    """The physical plan of ``root`` as text; a logical ``root`` is planned with ``settings`` first."""
    root = planned(root, (settings or ExplainSettings()).planner())
    streaming = root.traits.streaming
    lines: list[str] = []

    def with_mode(describe: str, mode: ChangelogMode | str) -> str:
        return describe[:-1] + f", changelogMode={mode})" if streaming else describe

    def emit(prefix: str, connector: str, text: str) -> str:
        """Append a line; return the prefix of the lines below it."""
        lines.append(prefix + connector + text)
        if not connector:
            return prefix
        return prefix + (":  " if connector == ":- " else "   ")

    def exchange(prefix: str, connector: str, keys: tuple[str, ...], mode: ChangelogMode) -> str:
        dist = f"hash[{', '.join(keys)}]" if keys else "single"
        return emit(prefix, connector, with_mode(f"Exchange(distribution=[{dist}])", mode))

    def visit(node: PlanNode, prefix: str, connector: str) -> None:
        if not node.in_flink_plan:
            return visit(node.inputs[0], prefix, connector)   # e.g. the wall clock's assigner: Flink has no node
        split = isinstance(node, Aggregate) and node.traits.two_phase
        describe = _describe_global(node) if isinstance(node, Aggregate) and split else describe_node(node)
        describe = _with_state_ttl(describe, node)
        mode = "[NONE]" if isinstance(node, Sink) else node.traits.changelog_mode
        assigner = node.traits.mini_batch_assigner
        if assigner is not None:
            size = f", size=[{assigner[1]}]" if assigner[2] == "ProcTime" else ""   # a row-time one counts no rows
            prefix = emit(prefix, connector, with_mode(
                f"MiniBatchAssigner(interval=[{assigner[0]}ms], mode=[{assigner[2]}]{size})", INSERT_ONLY))
            connector = "+- "
        if isinstance(node, Project) and isinstance(node.input, Filter):
            # One Calc computes a filter and the projection above it, as Flink's CalcMergeRule.
            describe = describe[:-1] + f", where=[{node.input.predicate}])"
            node = node.input
        below = emit(prefix, connector, with_mode(describe, mode))
        if isinstance(node, Aggregate):
            below = exchange(below, "+- ", node.keys, INSERT_ONLY if split else node.input.traits.changelog_mode)
            if split:
                below = emit(below, "+- ", with_mode(_describe_local(node), INSERT_ONLY))
            visit(node.input, below, "+- ")
        elif isinstance(node, Join):
            for child, keys, connector in ((node.left, node.left_keys, ":- "), (node.right, node.right_keys, "+- ")):
                visit(child, exchange(below, connector, keys, child.traits.changelog_mode), "+- ")
        elif isinstance(node, WindowAggregate):
            keys = tuple(k for k in node.keys if k not in (node.window_start, node.window_end))
            visit(node.input, exchange(below, "+- ", keys, node.input.traits.changelog_mode), "+- ")
        elif isinstance(node, OverAggregate):
            visit(node.input, exchange(below, "+- ", node.partition_keys, node.input.traits.changelog_mode), "+- ")
        elif isinstance(node, (WindowRank, WindowDeduplicate)):
            visit(node.input, exchange(below, "+- ", exchange_keys(node), node.input.traits.changelog_mode), "+- ")
        elif isinstance(node, (Rank, Deduplicate, UpsertMaterialize, ChangelogNormalize)):
            keys = node.partition_keys if isinstance(node, Rank) else \
                node.primary_key if isinstance(node, UpsertMaterialize) else node.keys
            drop = getattr(node, "drop_update_before", False)  # Flink's DropUpdateBefore under a ChangelogNormalize
            mode = replace(node.input.traits.changelog_mode, update_before=False) if drop else None
            below = exchange(below, "+- ", keys, mode or node.input.traits.changelog_mode)
            visit(node.input, emit(below, "+- ", f"DropUpdateBefore(changelogMode={mode})") if mode else below, "+- ")
        else:
            # A DataStream read as a table is a TableSourceScan, as in Flink's plan: its graph is not printed.
            children = side_inputs(node)
            for i, child in enumerate(children):
                visit(child, below, "+- " if i == len(children) - 1 else ":- ")

    visit(root, "", "")
    title = "== Physical Plan ==" if streaming else "== Physical Plan (batch) =="
    return title + "\n" + "\n".join(lines) + "\n" + _flush_section(root) + _no_effect_section(settings)


def _no_effect_section(settings: ExplainSettings | None) -> str:
    """A line naming the Flink keys that are set but change nothing on Spark (none: no line)."""
    if settings is None or not settings.no_effect_keys:
        return ""
    return ("\n== Configuration ==\nFlink keys set with no effect on Spark (accepted, not read): "
            + ", ".join(settings.no_effect_keys) + "\n")


def _with_state_ttl(describe: str, node: PlanNode) -> str:
    """A stateful operator's state TTL (:mod:`changeflow.plan.rules.state_ttl`), where it has one."""
    sides = node.traits.side_ttl_ms
    if sides is not None:
        if not any(sides):
            return describe
        return describe[:-1] + f", leftStateTtl=[{sides[0]}ms], rightStateTtl=[{sides[1]}ms])"
    ttl = node.traits.state_ttl_ms
    return describe[:-1] + f", stateTtl=[{ttl}ms])" if ttl else describe


def _flush_section(root: PlanNode) -> str:
    """Which operators buffer their output per key (FLIP-365), and why."""
    flush = root.traits.flush
    if flush is None:
        return ""
    when = ("at the end of every micro-batch (memory-buffer-only)" if flush.memory_only
            else f"every {flush.interval_ms}ms, on idle input and at end of input")
    lines = []

    def visit(node: PlanNode) -> None:
        for child in side_inputs(node):
            visit(child)
        if isinstance(node, Aggregate) and node.traits.buffers:
            keyed = f"keyed by [{', '.join(node.keys)}]" if node.keys else "parallelism 1 (no grouping key)"
            calls = [_describe_call(c) + f" AS {c.output}" for c in node.calls]
            name = "GlobalGroupAggregate" if node.traits.two_phase else "GroupAggregate"
            lines.append(f"{_aggregate(name, node, calls)}: buffers the "
                         f"latest output per key, flushed {when}; output idempotent (group aggregation), {keyed}")

    visit(root)
    if not lines:
        return "\n== Output Flush ==\nno operator buffers: none has an idempotent keyed output\n"
    if not flush.memory_only:
        pace = "micro-batches of unbounded input: "
        if not root.traits.output_buffered:
            lines.append(pace + "at the sources' pace (some rows reach the sink unbuffered)")
        elif reads_a_file_per_batch(root):
            lines.append(pace + "at the sources' pace (a monitored directory is read a file per micro-batch)")
        else:
            lines.append(pace + f"every {flush.interval_ms}ms (every row reaching the sink is buffered)")
    return "\n== Output Flush ==\n" + "\n".join(lines) + "\n"


def describe_node(node: PlanNode) -> str:
    """One operator of a physical plan as EXPLAIN names it, without its changelog mode."""
    if isinstance(node, Source):
        return f"TableSourceScan(table=[{node.name}], fields=[{', '.join(node.field_names)}])"
    if isinstance(node, Project):
        items = [str(e) if getattr(e, "name", None) == n else f"{e} AS {n}" for n, e in node.exprs]
        return f"Calc(select=[{', '.join(items)}])"
    if isinstance(node, Filter):
        return f"Calc(where=[{node.predicate}])"
    if isinstance(node, Aggregate):
        name = "GroupAggregate" if node.traits.streaming else "HashAggregate"
        if node.traits.mini_batch:
            name = "MiniBatchGroupAggregate"
        return _aggregate(name, node, [_describe_call(c) + f" AS {c.output}" for c in node.calls])
    if isinstance(node, (WatermarkAssigner, WindowTableFunction, WindowAggregate)):
        return describe_event_time(node)
    if isinstance(node, OverAggregate):
        return describe_over(node)
    if isinstance(node, TableAggregate):
        columns = node.field_names[len(node.keys):]
        return (f"PythonGroupTableAggregate(groupBy=[{', '.join(node.keys)}], "
                f"select=[{', '.join(node.keys + (f'{node.call}',))} AS ({', '.join(columns)})])")
    if isinstance(node, WINDOW_OPERATORS):
        return describe_window_op(node)
    if isinstance(node, Join):
        return _describe_join(node)  # an interval join too (its own name and window bounds)
    if isinstance(node, Union):
        return f"Union(all=[true], union=[{', '.join(node.field_names)}])"
    if isinstance(node, Sort):  # batch only: streaming plans it as a Rank (rules/sort_limit.py)
        from changeflow.plan.sort_explain import describe_sort
        return describe_sort(node)
    if isinstance(node, Replicate):  # Flink: a Correlate of its $REPLICATE_ROWS$ table function
        columns = ", ".join(node.field_names)
        return (f"Correlate(invocation=[$REPLICATE_ROWS$1({node.count}, {columns})], "
                f"select=[{columns}], joinType=[INNER])")
    if isinstance(node, ChangelogNormalize):
        return f"ChangelogNormalize(key=[{', '.join(node.keys)}])"
    if isinstance(node, Deduplicate):
        keep = "LastRow" if node.keep_last else "FirstRow"
        order = "PROCTIME" if node.order == "proctime" else "ROWTIME"
        insert_only = str(node.traits.changelog_mode.insert_only).lower()
        # Over a retracting input (which Flink refuses) changeflow keeps every live row per key.
        strategy = "" if node.input.traits.changelog_mode.insert_only else "strategy=[RetractStrategy], "
        return (f"Deduplicate(keep=[{keep}], key=[{', '.join(node.keys)}], order=[{order}], {strategy}"
                f"outputInsertOnly=[{insert_only}])")
    if isinstance(node, Rank):
        return _describe_rank(node, node.input.traits.changelog_mode)
    if isinstance(node, Sort):
        return _describe_sort(node)
    if isinstance(node, Sink):
        name = node.table if "." in node.table else f"default_catalog.default_database.{node.table}"
        return f"Sink(table=[{name}], fields=[{', '.join(node.input.field_names)}]{_sink_keys(node)})"
    if isinstance(node, UpsertMaterialize):
        return _describe_materializer(node)
    if isinstance(node, correlate.Correlate):
        return correlate.describe(node)
    raise TypeError(f"EXPLAIN has no description for {type(node).__name__}")


def _sink_keys(node: Sink) -> str:
    """A sink's upsert attributes: the upsert keys of its updating input,
    ``upsertMaterialize=[true]`` where the planner put the sink upsert
    materializer before it (changes for one primary key may arrive out of
    order) and the INSERT's ``conflictStrategy``, as Flink prints them (it
    shows the conflict strategy in streaming mode only)."""
    text = ""
    if isinstance(node.input, UpsertMaterialize):
        text += ", upsertMaterialize=[true]"
    elif not node.input.traits.changelog_mode.insert_only:
        keys = node.input.traits.upsert_keys
        if keys:
            text += ", upsertKeys=[" + ", ".join(f"[{', '.join(k)}]" for k in keys) + "]"
    if node.conflict is not None and node.traits.streaming:
        text += f", conflictStrategy=[{node.conflict}]"
    return text


def _describe_materializer(node: UpsertMaterialize) -> str:
    """The sink upsert materializer: its key, the input's upsert key, strategy and conflict mode."""
    parts = [f"pk=[{', '.join(node.primary_key)}]"]
    if node.upsert_key is not None:
        parts.append(f"upsertKey=[{', '.join(node.upsert_key)}]")
    parts.append(f"strategy=[{node.strategy}]")
    if node.strategy == "ADAPTIVE":
        parts.append(f"thresholds=[high={node.threshold_high}, low={node.threshold_low}]")
    parts.append(f"conflict=[{node.conflict}]")
    if node.ttl_ms:
        parts.append(f"stateTtl=[{node.ttl_ms}ms]")
    return f"SinkMaterializer({', '.join(parts)})"


def _describe_join(node: Join) -> str:
    names = node.field_names
    left_width = len(node.left.schema)
    right_out = dict(zip(node.right.field_names, names[left_width:], strict=True))
    parts: list[str] = [f"({lk} = {right_out[rk]})" for lk, rk in zip(node.left_keys, node.right_keys, strict=True)]
    if node.condition is not None:
        parts.append(str(node.condition))
    where = parts[0] if len(parts) == 1 else "(" + " AND ".join(parts) + ")" if parts else "true"
    specs = [_input_spec(child, keys) for child, keys in ((node.left, node.left_keys), (node.right, node.right_keys))]
    from changeflow.plan.time_joins import IntervalJoin, TemporalJoin
    if isinstance(node, TemporalJoin):  # Flink's TemporalJoin line, its marker condition included
        right_out = dict(zip(node.right.field_names, names[left_width:], strict=True))
        marker = (f"__TEMPORAL_JOIN_CONDITION({node.left_time}, {right_out[node.right_time]}, "
                  f"__TEMPORAL_JOIN_CONDITION_PRIMARY_KEY({', '.join(right_out[k] for k in node.primary_key)}), "
                  f"__TEMPORAL_JOIN_LEFT_KEY({', '.join(node.left_keys)}), "
                  f"__TEMPORAL_JOIN_RIGHT_KEY({', '.join(right_out[k] for k in node.right_keys)}))")
        return (f"TemporalJoin(joinType=[{_JOIN_TYPES[node.join_type]}], where=[({' AND '.join(parts + [marker])})], "
                f"select=[{', '.join(names)}])")
    if isinstance(node, IntervalJoin):  # Flink's IntervalJoin line (time indexes: positions in each input)
        bounds = (f"isRowTime=true, leftLowerBound={node.lower_ms}, leftUpperBound={node.upper_ms}, "
                  f"leftTimeIndex={node.left.field_names.index(node.left_time)}, "
                  f"rightTimeIndex={node.right.field_names.index(node.right_time)}")
        return (f"IntervalJoin(joinType=[{_JOIN_TYPES[node.join_type]}], windowBounds=[{bounds}], where=[{where}], "
                f"select=[{', '.join(names)}])")
    mini = ", miniBatch=[true]" if node.traits.mini_batch else ""
    return (f"Join(joinType=[{_JOIN_TYPES[node.join_type]}], where=[{where}], select=[{', '.join(names)}], "
            f"leftInputSpec=[{specs[0]}], rightInputSpec=[{specs[1]}]{mini})")


def _input_spec(child: PlanNode, join_keys: tuple[str, ...]) -> str:
    """Flink's JoinInputSideSpec: does the input have a unique key, and is it inside the join key?"""
    keys = child.traits.unique_key
    if keys is None:
        return "NoUniqueKey"
    return "JoinKeyContainsUniqueKey" if set(keys) <= set(join_keys) else "HasUniqueKey"


def _describe_rank(node: Rank, input_mode: ChangelogMode) -> str:
    # Flink's Top-N strategies: an insert-only input needs only the top rows (AppendFast);
    # an updating input keeps every row of the partition to refill the top (Retract).
    strategy = "AppendFastStrategy" if input_mode.insert_only else "RetractStrategy"
    order = ", ".join(f"{c} {'ASC' if asc else 'DESC'}" for c, asc, _ in node.order_by)
    return (f"Rank(strategy=[{strategy}], rankType=[ROW_NUMBER], rankRange=[rankStart={node.rank_start}, "
            f"rankEnd={node.rank_end}], partitionBy=[{', '.join(node.partition_keys)}], orderBy=[{order}], "
            f"select=[{', '.join(node.field_names)}])")


def _describe_local(node: Aggregate) -> str:
    calls = [f"{_describe_call(c)} AS {_names(p)}" for c, p in zip(node.calls, _partial_names(node), strict=True)]
    return _aggregate("LocalGroupAggregate", node, calls)


def _describe_global(node: Aggregate) -> str:
    calls = []
    for call, partials in zip(node.calls, _partial_names(node), strict=True):
        name = _describe_call(call).split("(")[0]
        arg = partials[0] if len(partials) == 1 else _names(partials)
        calls.append(f"{name}({arg}) AS {call.output}")
    return _aggregate("GlobalGroupAggregate", node, calls)


def _aggregate(name: str, node: Aggregate, calls: list[str]) -> str:
    group = f"groupBy=[{', '.join(node.keys)}], " if node.keys else ""
    level = node.traits.get("partial_final")  # a split distinct aggregation (plan/rules/split_distinct.py)
    group += f"partialFinalType=[{level}], " if level else ""
    return f"{name}({group}select=[{', '.join(list(node.keys) + calls)}])"


def _partial_names(node: Aggregate) -> list[list[str]]:
    """Flink's names of the partial accumulator fields, numbered across calls: ``count1$0, sum$1``."""
    out, n = [], 0
    for call in node.calls:
        names = []
        for field in partial_fields(call):
            names.append(f"{_PARTIAL_NAMES.get(field, call.function)}${n}")
            n += 1
        out.append(names)
    return out


# Accumulator field -> the name Flink gives the partial (MIN/MAX's "value" is the function's name).
_PARTIAL_NAMES = {"rows": "count1", "non_null": "count", "sum": "sum"}


def _names(names: list[str]) -> str:
    return names[0] if len(names) == 1 else f"({', '.join(names)})"


def _describe_call(call) -> str:
    if call.function == USER_FUNCTION:
        return str(call)  # a Python aggregate function: its name and argument columns
    name = {"count_star": "COUNT", "listagg": "LISTAGG"}.get(call.function, call.function.upper())
    arg = "*" if call.arg is None else call.arg
    if call.function == "listagg" and call.separator != ",":
        arg = f"{arg}, {call.separator!r}"
    return f"{name}({'DISTINCT ' if call.distinct else ''}{arg})"


__all__ = ["ExplainSettings", "describe_node", "explain"]


def _describe_sort(node: Sort) -> str:
    """A batch sort as Flink's batch plan names it: Sort, Limit or SortLimit."""
    order = ", ".join(f"{c} {'ASC' if asc else 'DESC'}" for c, asc, _ in node.order_by)
    if node.fetch is None and node.offset == 0:
        return f"Sort(orderBy=[{order}])"
    fetch = "unlimited" if node.fetch is None else node.fetch
    limit = f"offset=[{node.offset}], fetch=[{fetch}], global=[true]"
    return f"SortLimit(orderBy=[{order}], {limit})" if node.order_by else f"Limit({limit})"


def describe_event_time(node: PlanNode) -> str:
    """A watermark assigner, window TVF or window aggregate as EXPLAIN names it."""
    if isinstance(node, WatermarkAssigner):
        return f"WatermarkAssigner(rowtime=[{node.rowtime}], watermark=[{node.text}])"
    if isinstance(node, WindowTableFunction):
        return f"WindowTableFunction(window=[{_window(node.window, node.time_column)}])"
    assert isinstance(node, WindowAggregate)
    window = (node.window_start, node.window_end)
    keys = [k for k in node.keys if k not in window]
    group = f"groupBy=[{', '.join(keys)}], " if keys else ""
    calls = [_describe_call(c) + f" AS {c.output}" for c in node.calls]
    return (f"WindowAggregate({group}window=[{node.window_text}], select=[{', '.join(list(node.keys) + calls)}], "
            f"emit=[once, when the watermark passes {node.window_end}])")


def _window(window, time_column: str) -> str:
    """A window spec with its time column: ``TUMBLE(time_col=[ts], size=[10 s])``."""
    text = str(window)
    return text.replace("(", f"(time_col=[{time_column}], ", 1)
