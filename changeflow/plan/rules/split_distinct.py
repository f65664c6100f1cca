"""Split distinct aggregation: ``table.optimizer.distinct-agg.split.enabled``.

Flink's streaming planner (SplitAggregateRule) rewrites a group aggregation
with DISTINCT aggregates into two levels, so that one hot group key does not
keep one task busy with a huge distinct-value state:

* a *partial* aggregation grouped by the original keys plus a bucket
  ``MOD(HASH_CODE(x), bucket-num)`` of the distinct argument ``x``
  (``table.optimizer.distinct-agg.split.bucket-num``, default 1024), computing
  the distinct aggregate within each bucket and the other aggregates partially;
* a *final* aggregation grouped by the original keys combining the partial
  results: COUNT(DISTINCT) and COUNT -> SUM0 of the partial counts, SUM -> SUM,
  SUM0 -> SUM0, MIN/MAX -> MIN/MAX, AVG -> SUM0 and COUNT partially, then
  sum / count above the final level. Each distinct value lands in exactly one
  bucket, so summing the per-bucket distinct counts counts each value once.

The final level consumes the partial level's updates (each partial row change
is a retraction and an insertion), so it emits updates as the unsplit
aggregation does; materialized, the results are equal.

DISTINCT aggregates over several columns need one copy of each row per
distinct column (Flink's Expand): :mod:`changeflow.plan.distinct_expand` builds the
copies as a union of Calcs.

Like Flink, the rule applies only in streaming mode and only when every
aggregate of the node can be split. changeflow differs in three ways:

* over several distinct columns the plan shows a Union of Calcs where Flink's
  shows an Expand, and the partial level groups by the expand id ``$e`` where
  Flink filters each partial aggregate by it (the same groups and results);
* FIRST_VALUE, LAST_VALUE and LISTAGG, which Flink splits, keep the node
  one level: their results depend on arrival order, which the split changes;
  sums and averages over FLOAT/DOUBLE keep it one level too (the order of
  additions changes the last bits), and so do those over DECIMAL;
* Flink also hashes the argument of a non-distinct MIN/MAX into the partial
  group key (against hot spots under retraction); changeflow computes them in
  the buckets of the distinct argument, which is equally correct and needs no
  Expand. The bucket is Spark's Murmur3 ``hash`` of the value modulo
  bucket-num, not Java's ``hashCode``: it decides only where a value goes.
"""

from __future__ import annotations

from typing import Any

from changeflow.common.types import DataTypes
from changeflow.expressions import Call, Column, Expression, Literal
from changeflow.kernels.aggregate.functions import AggCall
from changeflow.plan.nodes import Aggregate, PlanNode, Project
from changeflow.plan.physical import annotate, rewrite
from changeflow.plan.rules import Rule
from changeflow.plan.distinct_expand import expand
from changeflow.plan.type_inference import type_of

# function -> (partial functions, final function of each partial result), as Flink's PARTIAL_FINAL_MAP.
_SPLITS = {
    "count_star": (("count_star",), ("sum0",)),
    "count": (("count",), ("sum0",)),
    "sum": (("sum",), ("sum",)),
    "sum0": (("sum0",), ("sum0",)),
    "min": (("min",), ("min",)),
    "max": (("max",), ("max",)),
    "avg": (("sum0", "count"), ("sum0", "sum0")),
}
_SUMS = ("sum", "sum0", "avg")


def why_not_split(node: Aggregate) -> str | None:
    """Why the rule leaves ``node`` one level (None: it splits it).

    >>> from changeflow.common.types import DataTypes as T
    >>> distinct = AggCall("count", "u", T.STRING(), "c", distinct=True)
    >>> why_not_split(Aggregate(None, ("k",), (distinct,), ()))
    >>> why_not_split(Aggregate(None, ("k",), (AggCall("count", "u", T.STRING(), "c"),), ()))
    'no DISTINCT aggregate'
    >>> why_not_split(Aggregate(None, ("k",), (distinct, AggCall("listagg", "u", T.STRING(), "l")), ()))
    'LISTAGG cannot be split'
    """
    if not any(c.distinct for c in node.calls):
        return "no DISTINCT aggregate"
    for call in node.calls:
        if call.function not in _SPLITS:
            return f"{call.function.upper()} cannot be split"
        if call.function in _SUMS and not call.typed_arg[1].is_integral:
            return f"{call.function.upper()} over {call.arg_type} is not split (its result depends on the order)"
    return None


def _distinct_columns(node: Aggregate) -> list[str]:
    """The distinct arguments that are not group keys (the partial level groups by their bucket)."""
    found: list[str] = []
    for call in node.calls:
        if call.distinct and call.arg is not None and call.arg not in node.keys and call.arg not in found:
            found.append(call.arg)
    return found


def _fresh(taken: set[str], position: int) -> str:
    """Flink's ``$f<position>`` name, or the next position free of the names ``taken``."""
    while f"$f{position}" in taken:
        position += 1
    name = f"$f{position}"
    taken.add(name)
    return name


def split(node: Aggregate, buckets: int) -> PlanNode:
    """``node`` as a partial aggregation under a final one (and a Calc finishing AVG over them)."""
    # Over a Calc that only renames the columns the bucket (and AVG's cast) read, they join its
    # select list (one Calc, as Flink's plan); a computed value is not computed twice (a
    # nondeterministic one would then land in another bucket than its value).
    # Expanded (several distinct columns), every argument is copied per group set: only plain columns are.
    calc = node.input if isinstance(node.input, Project) else None
    several = len(_distinct_columns(node)) > 1
    if calc is not None and not all(isinstance(dict(calc.exprs)[c.arg], Column) for c in node.calls if
                                    c.arg is not None and (several or c.function == "avg" or
                                                           c.arg in _distinct_columns(node))):
        calc = None
    below = node.input if calc is None else calc.input
    exprs: list[tuple[str, Expression]] = [(n, Column(n)) for n in below.field_names] if calc is None else \
        list(calc.exprs)
    computed = dict(exprs)
    in_types = below.type_map()
    taken = set(below.field_names) | set(computed) | {n for n, _ in node.schema}
    keys = list(node.keys)
    distinct_columns = _distinct_columns(node)
    wide: dict[str, str] = {}
    inputs = list(node.calls)  # the calls as the partial level reads them
    if len(distinct_columns) > 1:  # one copy of each row per group set (split_distinct_expand.py)
        project, keys, inputs = expand(node, below, computed, distinct_columns, buckets,
                                       lambda: _fresh(taken, len(exprs) + len(taken)))
    else:
        for column in distinct_columns:
            bucket = _fresh(taken, len(exprs))
            exprs.append((bucket, Call("%", (Call("hash_code", (computed[column],)), Literal(buckets)))))
            keys.append(bucket)
        # AVG's partial sum runs over the argument as BIGINT, as the unsplit AVG accumulates
        # (a partial SUM0 in the argument's own type could overflow where AVG does not).
        for call in node.calls:
            arg = call.arg
            if call.function == "avg" and arg is not None and arg not in wide:
                wide[arg] = _fresh(taken, len(exprs))
                exprs.append((wide[arg], Call("cast", (computed[arg], Literal(DataTypes.BIGINT())))))
        project = Project(below, tuple(exprs), tuple((n, type_of(e, in_types)) for n, e in exprs))

    partial_calls: list[AggCall] = []
    final_calls: list[AggCall] = []
    finish: list[tuple[str, Expression]] = [(k, Column(k)) for k in node.keys]
    for original, call in zip(node.calls, inputs, strict=True):
        partials, finals = _SPLITS[call.function]
        outputs = []
        for p, f in zip(partials, finals, strict=True):
            arg = wide[call.typed_arg[0]] if call.function == "avg" and p == "sum0" and wide else call.arg
            arg_type = None if arg is None else project.type_map()[arg]
            pc = AggCall(p, arg, arg_type, _fresh(taken, len(keys) + len(partial_calls)), call.distinct)
            partial_calls.append(pc)
            out = call.output if len(partials) == 1 else _fresh(taken, len(node.keys) + len(final_calls))
            final_calls.append(AggCall(f, pc.output, pc.result_type, out))
            outputs.append(out)
        finish.append((call.output, _avg(original, *outputs) if call.function == "avg" else Column(call.output)))
    partial = Aggregate(project, tuple(keys), tuple(partial_calls),
                        tuple((k, project.type_map()[k]) for k in keys) +
                        tuple((c.output, c.result_type) for c in partial_calls), node.state_ttl_ms)
    final_schema = tuple((k, partial.type_map()[k]) for k in node.keys) + tuple(
        (c.output, c.result_type) for c in final_calls)
    final = Aggregate(annotate(partial, partial_final="PARTIAL"), node.keys, tuple(final_calls), final_schema,
                      node.state_ttl_ms)
    final = annotate(final, partial_final="FINAL")
    if len(distinct_columns) <= 1 and all(isinstance(e, Column) and e.name == n for n, e in finish):
        return final  # (the expanded partial level reads nullable copies: the Calc restores the declared types)
    return Project(final, tuple(finish), node.schema)


def _avg(call: AggCall, total: str, count: str) -> Expression:
    """AVG from the final sum and count: ``CAST(total / NULLIF(count, 0) AS <arg type>)``, NULL for no values."""
    quotient = Call("/", (Column(total), Call("nullif", (Column(count), Literal(0, DataTypes.BIGINT())))))
    return Call("cast", (quotient, Literal(call.result_type)))


def apply(plan: PlanNode, settings: Any) -> PlanNode:
    """The rule: every splittable group aggregation of a streaming plan, split in two levels."""
    if not (settings.streaming and settings.distinct_agg_split):
        return plan
    buckets = settings.distinct_agg_split_buckets
    if buckets <= 0:
        raise ValueError(f"table.optimizer.distinct-agg.split.bucket-num must be positive, got {buckets}")
    return rewrite(plan, lambda node: split(node, buckets)
                   if isinstance(node, Aggregate) and why_not_split(node) is None
                   else node)


# Runs on the logical plan (it rewrites), after the sink rule and before any annotation but its own.
RULE = Rule("split_distinct", 15, apply, ("partial_final",))

__all__ = ["apply", "split", "why_not_split"]
