"""Table API conformance cases, shared by the Flink golden recorder and changeflow's tests.

Each case is a function ``build(t_env, E) -> Table``.  ``E`` is a namespace with ``col``,
``lit`` (later ``call``) and ``DataTypes``, taken either from ``pyflink.table`` or from
``changeflow.table``, so this module must not import pyflink (or changeflow) itself.

The builds only use: ``t_env.from_elements(rows, [names])`` (types inferred: int -> BIGINT,
str -> STRING, float -> DOUBLE) or ``t_env.from_elements(rows, E.DataTypes.ROW([...]))``
where nulls or a specific type (INT) are needed; ``Table.select / add_columns / where /
filter / group_by(...).select(...) / alias``; expressions ``col``, ``lit``, arithmetic,
comparison, ``%``, ``&`` / ``|``, ``.alias`` and the aggregate properties
``sum sum0 count avg min max first_value last_value list_agg(sep) stddev_pop stddev_samp
var_pop var_samp collect`` with ``.distinct`` (PyFlink spelling: ``col('v').sum.distinct``;
``list_agg`` is a *method*: ``col('n').list_agg()`` / ``col('n').list_agg(';')``;
COUNT(*) is ``lit(1).count`` -- ``col('*').count`` expands to all columns and fails in Flink).

Goldens recorded by ``conformance/record_flink.py`` live in ``conformance/goldens/table/``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Dict, Optional

__all__ = ["Case", "CASES", "case", "MINIBATCH"]


@dataclass(frozen=True)
class Case:
    name: str
    build: Callable  # build(t_env, E) -> Table
    mode: str = "streaming"  # or "batch"
    config: Dict[str, str] = field(default_factory=dict)
    deterministic: bool = True  # False -> tests compare the materialized result only
    description: str = ""


CASES: Dict[str, Case] = {}


def case(name: str, *, mode: str = "streaming", config: Optional[Dict[str, str]] = None,
         deterministic: bool = True, description: Optional[str] = None):
    """Register ``build`` as case ``name``.  Stackable: one build may be registered under
    several names (e.g. a streaming and a batch variant).  The description defaults to the
    build's docstring."""
    if mode not in ("streaming", "batch"):
        raise ValueError(f"mode must be 'streaming' or 'batch', got {mode!r}")

    def register(build: Callable) -> Callable:
        if name in CASES:
            raise ValueError(f"duplicate conformance case {name!r}")
        desc = description if description is not None else (build.__doc__ or "")
        CASES[name] = Case(name=name, build=build, mode=mode, config=dict(config or {}),
                           deterministic=deterministic, description=" ".join(desc.split()))
        return build

    return register


# Mini-batch on, with a latency far longer than the job: a bounded input is consumed
# before the first processing-time boundary, so all rows form one bundle per operator
# (the bundle is flushed at end of input).
MINIBATCH = {
    "table.exec.mini-batch.enabled": "true",
    "table.exec.mini-batch.allow-latency": "10 s",
    "table.exec.mini-batch.size": "1000",
}

# --------------------------------------------------------------------------------------
# Input data
# --------------------------------------------------------------------------------------

# The daily-UV example of the mini-batch seed: (user_id, day).
DAILY_UV_ROWS = [(1, "2023-12-19"), (2, "2023-12-19"), (11, "2023-12-19")]

# (k, v) BIGINT.  Inner SUM(v) GROUP BY k evolves as (-U/+U pairs in brackets):
#  1 (1,5)  +I(1,5)            7 (3,4)   [(3,2)->(3,6)]     12 (2,2)  [(2,0)->(2,2)]
#  2 (2,7)  +I(2,7)            8 (1,-8)  [(1,8)->(1,0)]     13 (3,-6) [(3,6)->(3,0)]
#  3 (3,2)  +I(3,2)            9 (5,6)   +I(5,6)
#  4 (1,3)  [(1,5)->(1,8)]    10 (4,0)   nothing (sum unchanged)
#  5 (4,4)  +I(4,4)           11 (6,4)   +I(6,4)
#  6 (2,-7) [(2,7)->(2,0)]
# Bucket b = k % 2: b=1 holds keys 1,3,5 (final sums 0,0,6); b=0 holds 2,4,6 (2,4,4).
# Duplicate sums (6,6 / 4,4 / 0,0) make DISTINCT matter.
KV_ROWS = [(1, 5), (2, 7), (3, 2), (1, 3), (4, 4), (2, -7), (3, 4), (1, -8), (5, 6),
           (4, 0), (6, 4), (2, 2), (3, -6)]

# Same shape with DOUBLE values; all values are dyadic fractions so sums are exact.
KD_ROWS = [(1, 0.5), (2, 1.25), (3, -2.0), (1, 0.25), (4, 3.5), (2, -1.25), (3, 4.0),
           (1, -0.75), (5, 1.0), (4, 0.0), (6, -3.5), (2, 2.5)]

# Nullable BIGINT v.  Inner SUM(v) GROUP BY k: k1 null->6, k2 4 (the null row leaves it
# unchanged), k3 null->5, k4 2->0, k5 null (only nulls), k6 -1.
KV_NULL_ROWS = [(1, None), (2, 4), (3, None), (1, 6), (2, None), (4, 2), (5, None),
                (3, 5), (4, -2), (6, -1)]

# (k, name) with a nullable name.  Inner LAST_VALUE(name) GROUP BY k.
KS_ROWS = [(1, "a"), (2, "b"), (3, "c"), (1, "d"), (4, "e"), (5, None), (3, "a"),
           (2, "f"), (5, "g"), (6, "b"), (1, "a")]

# DOUBLE values that are not exactly representable: retraction by subtraction leaves
# floating-point residue.
KD_ROUNDING_ROWS = [(1, 0.1), (2, 0.2), (1, 0.2), (3, 0.3), (2, -0.2), (1, 0.7),
                    (3, 0.1), (4, 0.1), (2, 0.3)]


def _kv(t_env, E, rows=KV_ROWS):
    return t_env.from_elements(rows, ["k", "v"])


def _kv_nullable(t_env, E, rows):
    D = E.DataTypes
    schema = D.ROW([D.FIELD("k", D.BIGINT()), D.FIELD("v", D.BIGINT())])
    return t_env.from_elements(rows, schema)


def _inner_sum(t_env, E, rows=KV_ROWS, nullable=False):
    """group_by(k).select(k, v.sum as s, k % 2 as b): a retracting (updating) table."""
    col = E.col
    src = _kv_nullable(t_env, E, rows) if nullable else _kv(t_env, E, rows)
    return (src.group_by(col("k"))
            .select(col("k"), col("v").sum.alias("s"))
            .add_columns((col("k") % 2).alias("b")))


def lit_zero(E):
    """A constant group key (INT NOT NULL 0) for a single-group aggregate with group_by."""
    return E.lit(0)


def _inner_sum_double(t_env, E, rows=KD_ROWS):
    col = E.col
    src = t_env.from_elements(rows, ["k", "v"])
    return (src.group_by(col("k"))
            .select(col("k"), col("v").sum.alias("s"))
            .add_columns((col("k") % 2).alias("b")))


# --------------------------------------------------------------------------------------
# The mini-batch seed's daily-UV example
# --------------------------------------------------------------------------------------

def _daily_uv(t_env, E):
    col = E.col
    src = t_env.from_elements(DAILY_UV_ROWS, ["user_id", "day"])
    inner = (src.group_by(col("day"), col("user_id") % 10)
             .select(col("day"), col("user_id").count.distinct.alias("cnt")))
    return inner.group_by(col("day")).select(col("day"), col("cnt").sum.alias("total"))


@case("daily_uv_minibatch_off", description=(
    "Mini-batch seed: SELECT day, SUM(cnt) FROM (SELECT day, MOD(user_id,10), "
    "COUNT(DISTINCT user_id) cnt ... GROUP BY day, MOD(user_id,10)) GROUP BY day. "
    "Without mini-batch the outer value jitters 1,2,1,3: "
    "+I 1, -U 1, +U 2, -U 2, +U 1, -U 1, +U 3."))
def daily_uv_minibatch_off(t_env, E):
    return _daily_uv(t_env, E)


@case("daily_uv_minibatch_on", config=MINIBATCH, description=(
    "Mini-batch seed with mini-batch on; the bounded input ends before the 10 s latency, "
    "so all rows are one bundle and the only output is +I 3 (no intermediate values)."))
def daily_uv_minibatch_on(t_env, E):
    return _daily_uv(t_env, E)


@case("daily_uv_minibatch_size_2", deterministic=False,
      config={**MINIBATCH, "table.exec.mini-batch.size": "2"}, description=(
          "Daily UV with mini-batch size 2: bundles end by count, so the changelog depends "
          "on Flink's bundle boundaries (and its local/global agg split); compare the "
          "materialized result (day, 3) only."))
def daily_uv_minibatch_size_2(t_env, E):
    return _daily_uv(t_env, E)


@case("daily_uv_minibatch_size_2_one_phase", deterministic=False,
      config={**MINIBATCH, "table.exec.mini-batch.size": "2",
              "table.optimizer.agg-phase-strategy": "ONE_PHASE"}, description=(
          "Daily UV with mini-batch size 2 and one-phase aggregation: bundles end every 2 "
          "input records of each aggregate; compare the materialized result only."))
def daily_uv_minibatch_size_2_one_phase(t_env, E):
    return _daily_uv(t_env, E)


@case("batch_daily_uv", mode="batch", deterministic=False, description=(
    "Daily UV in batch mode: a single +I (2023-12-19, 3). Batch output is insert-only."))
def batch_daily_uv(t_env, E):
    return _daily_uv(t_env, E)


# --------------------------------------------------------------------------------------
# Multi-level aggregations
# --------------------------------------------------------------------------------------

@case("two_level_sum_then_histogram", description=(
    "Inner SUM(v) GROUP BY k; outer COUNT(k) GROUP BY s (how many keys have each sum). "
    "Every inner update moves a key between outer groups; a group left with no rows "
    "emits -D and a new group +I."))
def two_level_sum_then_histogram(t_env, E):
    col = E.col
    inner = _inner_sum(t_env, E)
    return inner.group_by(col("s")).select(col("s"), col("k").count.alias("n"))


@case("two_level_sum_then_histogram_minibatch", config=MINIBATCH, description=(
    "two_level_sum_then_histogram with mini-batch on (one bundle): groups that appear and "
    "vanish inside the bundle (sums 5, 7, 8) are never emitted; only final +I rows."))
def two_level_sum_then_histogram_minibatch(t_env, E):
    return two_level_sum_then_histogram(t_env, E)


@case("batch_two_level_sum_then_histogram", mode="batch", deterministic=False,
      description="Batch version of two_level_sum_then_histogram.")
def batch_two_level_sum_then_histogram(t_env, E):
    return two_level_sum_then_histogram(t_env, E)


@case("three_level_histogram_of_histogram", description=(
    "Three levels: SUM(v) GROUP BY k -> COUNT(k) GROUP BY s -> COUNT(s), SUM(s) "
    "GROUP BY n. Deletes from the middle level retract in the outer level."))
def three_level_histogram_of_histogram(t_env, E):
    col = E.col
    mid = (_inner_sum(t_env, E).group_by(col("s"))
           .select(col("s"), col("k").count.alias("n")))
    return mid.group_by(col("n")).select(col("n"), col("s").count.alias("num_sums"),
                                         col("s").sum.alias("sum_sums"))


@case("three_level_histogram_minibatch", config=MINIBATCH, description=(
    "three_level_histogram_of_histogram with mini-batch on (one bundle): each level "
    "folds its bundle per key, so only final values reach the output, all as +I."))
def three_level_histogram_minibatch(t_env, E):
    return three_level_histogram_of_histogram(t_env, E)


@case("two_level_where_between_levels", description=(
    "Inner SUM(v) GROUP BY k, WHERE s > 3, outer SUM(s), COUNT(k) GROUP BY b. The filter "
    "drops a +U whose -U passed, so the outer level sees a bare retraction."))
def two_level_where_between_levels(t_env, E):
    col = E.col
    inner = _inner_sum(t_env, E).where(col("s") > 3)
    return inner.group_by(col("b")).select(col("b"), col("s").sum.alias("sum_s"),
                                           col("k").count.alias("n"))


# --------------------------------------------------------------------------------------
# Every aggregate over retracting input (BIGINT)
# --------------------------------------------------------------------------------------

def _outer(t_env, E, *aggs):
    col = E.col
    return _inner_sum(t_env, E).group_by(col("b")).select(col("b"), *aggs)


@case("sum_over_retracting_input")
def sum_over_retracting_input(t_env, E):
    """SUM(s) GROUP BY b over the retracting inner SUM(v) GROUP BY k (see KV_ROWS)."""
    return _outer(t_env, E, E.col("s").sum.alias("sum_s"))


@case("sum0_over_retracting_input")
def sum0_over_retracting_input(t_env, E):
    """SUM0(s) (BIGINT NOT NULL) GROUP BY b over retracting input."""
    return _outer(t_env, E, E.col("s").sum0.alias("sum0_s"))


@case("count_over_retracting_input")
def count_over_retracting_input(t_env, E):
    """COUNT(s) and COUNT(*) (lit(1).count) GROUP BY b over retracting input."""
    return _outer(t_env, E, E.col("s").count.alias("count_s"),
                  E.lit(1).count.alias("count_star"))


@case("avg_bigint_over_retracting_input")
def avg_bigint_over_retracting_input(t_env, E):
    """AVG of BIGINT is BIGINT (integer division truncating toward zero); also AVG(s - 10)
    to pin the rounding of negative averages."""
    col = E.col
    return _outer(t_env, E, col("s").avg.alias("avg_s"),
                  (col("s") - 10).avg.alias("avg_s_minus_10"))


@case("min_over_retracting_input")
def min_over_retracting_input(t_env, E):
    """MIN(s) GROUP BY b over retracting input (the current minimum gets retracted)."""
    return _outer(t_env, E, E.col("s").min.alias("min_s"))


@case("max_over_retracting_input")
def max_over_retracting_input(t_env, E):
    """MAX(s) GROUP BY b over retracting input (the current maximum gets retracted)."""
    return _outer(t_env, E, E.col("s").max.alias("max_s"))


@case("max_over_retracting_input_minibatch", config=MINIBATCH, description=(
    "max_over_retracting_input with mini-batch on (one bundle): only final values."))
def max_over_retracting_input_minibatch(t_env, E):
    return max_over_retracting_input(t_env, E)


@case("first_value_over_retracting_input")
def first_value_over_retracting_input(t_env, E):
    """FIRST_VALUE(s) and FIRST_VALUE(k) GROUP BY b over retracting input."""
    col = E.col
    return _outer(t_env, E, col("s").first_value.alias("first_s"),
                  col("k").first_value.alias("first_k"))


@case("last_value_over_retracting_input")
def last_value_over_retracting_input(t_env, E):
    """LAST_VALUE(s) and LAST_VALUE(k) GROUP BY b over retracting input."""
    col = E.col
    return _outer(t_env, E, col("s").last_value.alias("last_s"),
                  col("k").last_value.alias("last_k"))


@case("stddev_var_bigint_over_retracting_input")
def stddev_var_bigint_over_retracting_input(t_env, E):
    """STDDEV_POP/STDDEV_SAMP/VAR_POP/VAR_SAMP of BIGINT: results are BIGINT. Flink plans
    them as $WELFORD_M2(x) (a DOUBLE sum of squared deviations) and COUNT(x), then
    CAST(POWER(M2 / n, 0.5) AS BIGINT) etc.: double arithmetic, truncated at the end."""
    col = E.col
    return _outer(t_env, E, col("s").stddev_pop.alias("stddev_pop_s"),
                  col("s").stddev_samp.alias("stddev_samp_s"),
                  col("s").var_pop.alias("var_pop_s"),
                  col("s").var_samp.alias("var_samp_s"))


@case("collect_over_retracting_input")
def collect_over_retracting_input(t_env, E):
    """COLLECT(s) (MULTISET<BIGINT> NOT NULL) GROUP BY b over retracting input."""
    return _outer(t_env, E, E.col("s").collect.alias("collect_s"))


@case("distinct_aggregates_over_retracting_input")
def distinct_aggregates_over_retracting_input(t_env, E, with_collect=True):
    """DISTINCT variants over retracting input with duplicate values (6,6 / 4,4 / 0,0)."""
    col = E.col
    aggs = [col("s").sum.distinct.alias("sum_d"),
            col("s").sum0.distinct.alias("sum0_d"),
            col("s").count.distinct.alias("count_d"),
            col("s").avg.distinct.alias("avg_d"),
            col("s").min.distinct.alias("min_d"),
            col("s").max.distinct.alias("max_d")]
    if with_collect:
        aggs.append(col("s").collect.distinct.alias("collect_d"))
    aggs.append(col("s").count.alias("count_all"))
    return _outer(t_env, E, *aggs)


@case("batch_distinct_aggregates", mode="batch", deterministic=False, description=(
    "Batch version of distinct_aggregates_over_retracting_input without COLLECT(DISTINCT): "
    "Flink's batch planner cannot plan COLLECT together with a DISTINCT aggregate."))
def batch_distinct_aggregates(t_env, E):
    return distinct_aggregates_over_retracting_input(t_env, E, with_collect=False)


@case("all_aggregates_over_retracting_input")
def all_aggregates_over_retracting_input(t_env, E, with_distinct=True):
    """Every aggregate at once over the same retracting input (one output row per change
    of any of them)."""
    col = E.col
    s = col("s")
    aggs = [s.sum.alias("sum_s"), s.sum0.alias("sum0_s"),
            s.count.alias("count_s"), E.lit(1).count.alias("count_star"),
            s.avg.alias("avg_s"), s.min.alias("min_s"), s.max.alias("max_s"),
            s.first_value.alias("first_s"), s.last_value.alias("last_s"),
            s.stddev_pop.alias("stddev_pop_s"), s.stddev_samp.alias("stddev_samp_s"),
            s.var_pop.alias("var_pop_s"), s.var_samp.alias("var_samp_s"),
            s.collect.alias("collect_s")]
    if with_distinct:
        aggs += [s.sum.distinct.alias("sum_d"), s.count.distinct.alias("count_d")]
    return _outer(t_env, E, *aggs)


@case("batch_all_aggregates_over_two_levels", mode="batch", deterministic=False,
      description=("Batch version of all_aggregates_over_retracting_input without the DISTINCT "
                   "aggregates (Flink's batch planner cannot plan COLLECT together with a "
                   "DISTINCT aggregate)."))
def batch_all_aggregates_over_two_levels(t_env, E):
    return all_aggregates_over_retracting_input(t_env, E, with_distinct=False)


@case("all_aggregates_minibatch", config=MINIBATCH, description=(
    "all_aggregates_over_retracting_input with mini-batch on (one bundle)."))
def all_aggregates_minibatch(t_env, E):
    return all_aggregates_over_retracting_input(t_env, E)


# --------------------------------------------------------------------------------------
# DOUBLE aggregates
# --------------------------------------------------------------------------------------

@case("double_aggregates_over_retracting_input")
def double_aggregates_over_retracting_input(t_env, E, with_distinct=True):
    """SUM/SUM0/AVG/MIN/MAX/STDDEV_*/VAR_* of DOUBLE over retracting input (KD_ROWS,
    dyadic values so sums are exact; stddev values pin Flink's formula)."""
    col = E.col
    s = col("s")
    aggs = [s.sum.alias("sum_s"), s.sum0.alias("sum0_s"), s.count.alias("count_s"),
            s.avg.alias("avg_s"), s.min.alias("min_s"), s.max.alias("max_s"),
            s.stddev_pop.alias("stddev_pop_s"), s.stddev_samp.alias("stddev_samp_s"),
            s.var_pop.alias("var_pop_s"), s.var_samp.alias("var_samp_s")]
    if with_distinct:
        aggs.append(s.avg.distinct.alias("avg_d"))
    aggs.append(s.collect.alias("collect_s"))
    return _inner_sum_double(t_env, E).group_by(col("b")).select(col("b"), *aggs)


@case("batch_double_aggregates", mode="batch", deterministic=False,
      description=("Batch version of double_aggregates_over_retracting_input without AVG("
                   "DISTINCT) (Flink's batch planner cannot plan COLLECT together with a "
                   "DISTINCT aggregate)."))
def batch_double_aggregates(t_env, E):
    return double_aggregates_over_retracting_input(t_env, E, with_distinct=False)


@case("double_sum_retract_rounding")
def double_sum_retract_rounding(t_env, E):
    """DOUBLE SUM/AVG with non-dyadic values (0.1, 0.2, ...): retraction subtracts, so the
    changelog carries floating-point residue such as 0.30000000000000004."""
    col = E.col
    inner = (t_env.from_elements(KD_ROUNDING_ROWS, ["k", "v"])
             .group_by(col("k")).select(col("k"), col("v").sum.alias("s")))
    return (inner.add_columns(lit_zero(E).alias("g"))
            .group_by(col("g")).select(col("g"), col("s").sum.alias("sum_s"),
                                       col("s").avg.alias("avg_s")))


# --------------------------------------------------------------------------------------
# Integer types other than BIGINT
# --------------------------------------------------------------------------------------

@case("int_column_aggregates")
def int_column_aggregates(t_env, E):
    """INT columns (explicit schema): SUM/AVG/MIN/MAX/STDDEV of INT are INT, COUNT is
    BIGINT NOT NULL; group_by directly on the INT source (insert-only input)."""
    col = E.col
    D = E.DataTypes
    schema = D.ROW([D.FIELD("g", D.INT()), D.FIELD("x", D.INT())])
    src = t_env.from_elements([(1, 3), (1, 4), (2, -7), (1, 8), (2, 0), (2, -2), (1, 3)],
                              schema)
    x = col("x")
    return src.group_by(col("g")).select(
        col("g"), x.sum.alias("sum_x"), x.sum0.alias("sum0_x"), x.count.alias("count_x"),
        x.avg.alias("avg_x"), x.min.alias("min_x"), x.max.alias("max_x"),
        x.stddev_pop.alias("stddev_pop_x"), x.var_samp.alias("var_samp_x"),
        x.sum.distinct.alias("sum_d"))


@case("sum_int_overflow_wraps")
def sum_int_overflow_wraps(t_env, E):
    """SUM of INT keeps type INT: summing past 2^31-1 wraps around (Java int arithmetic)."""
    col = E.col
    D = E.DataTypes
    schema = D.ROW([D.FIELD("g", D.INT()), D.FIELD("x", D.INT())])
    src = t_env.from_elements([(1, 2147483000), (1, 1000), (1, -2000)], schema)
    return src.group_by(col("g")).select(col("g"), col("x").sum.alias("sum_x"),
                                         col("x").avg.alias("avg_x"))


# --------------------------------------------------------------------------------------
# Strings: LISTAGG
# --------------------------------------------------------------------------------------

def _inner_last_name(t_env, E):
    col = E.col
    D = E.DataTypes
    schema = D.ROW([D.FIELD("k", D.BIGINT()), D.FIELD("name", D.STRING())])
    src = t_env.from_elements(KS_ROWS, schema)
    return (src.group_by(col("k"))
            .select(col("k"), col("name").last_value.alias("n"))
            .add_columns((col("k") % 2).alias("b")))


@case("list_agg_over_retracting_input")
def list_agg_over_retracting_input(t_env, E):
    """LISTAGG(n) (default ',' separator), LISTAGG(n, ';'), LISTAGG(DISTINCT n), plus
    COUNT/MIN/MAX of strings, over a retracting inner LAST_VALUE(name) GROUP BY k with a
    null name."""
    col = E.col
    n = col("n")
    return (_inner_last_name(t_env, E).group_by(col("b"))
            .select(col("b"), n.list_agg().alias("list_n"), n.list_agg(";").alias("list_semi"),
                    n.list_agg().distinct.alias("list_d"), n.count.alias("count_n"),
                    n.min.alias("min_n"), n.max.alias("max_n")))


# --------------------------------------------------------------------------------------
# Nulls
# --------------------------------------------------------------------------------------

@case("nulls_over_retracting_input")
def nulls_over_retracting_input(t_env, E, with_distinct=True):
    """Aggregates over a nullable column fed by a retracting inner SUM(v) GROUP BY k whose
    sums start as null (keys with only null v) and later become non-null."""
    col = E.col
    s = col("s")
    inner = _inner_sum(t_env, E, rows=KV_NULL_ROWS, nullable=True)
    aggs = [s.sum.alias("sum_s"), s.sum0.alias("sum0_s"), s.count.alias("count_s"),
            E.lit(1).count.alias("count_star"), s.avg.alias("avg_s"), s.min.alias("min_s"),
            s.max.alias("max_s"), s.first_value.alias("first_s"),
            s.last_value.alias("last_s"), s.stddev_pop.alias("stddev_pop_s"),
            s.var_samp.alias("var_samp_s"), s.collect.alias("collect_s")]
    if with_distinct:
        aggs.append(s.count.distinct.alias("count_d"))
    return inner.group_by(col("b")).select(col("b"), *aggs)


@case("batch_nulls_aggregates", mode="batch", deterministic=False,
      description=("Batch version of nulls_over_retracting_input without COUNT(DISTINCT) "
                   "(Flink's batch planner cannot plan COLLECT together with a DISTINCT "
                   "aggregate)."))
def batch_nulls_aggregates(t_env, E):
    return nulls_over_retracting_input(t_env, E, with_distinct=False)


@case("nulls_insert_only_aggregates")
def nulls_insert_only_aggregates(t_env, E):
    """Aggregates directly over a nullable insert-only column: a group whose values are all
    null (SUM null, COUNT 0, empty COLLECT), and null rows that change nothing."""
    col = E.col
    v = col("v")
    src = _kv_nullable(t_env, E, [(1, None), (2, 3), (1, None), (2, None), (1, 4), (3, None)])
    return src.group_by(col("k")).select(
        col("k"), v.sum.alias("sum_v"), v.sum0.alias("sum0_v"), v.count.alias("count_v"),
        E.lit(1).count.alias("count_star"), v.avg.alias("avg_v"), v.min.alias("min_v"),
        v.max.alias("max_v"), v.first_value.alias("first_v"), v.last_value.alias("last_v"),
        v.collect.alias("collect_v"))


# --------------------------------------------------------------------------------------
# Deletes, unchanged values, global aggregates
# --------------------------------------------------------------------------------------

@case("group_empties_emits_delete")
def group_empties_emits_delete(t_env, E):
    """Outer SUM(s), COUNT(k) GROUP BY s % 3 where inner updates move keys between buckets
    and a bucket's last row is retracted: Flink emits -D for it (and +I when it refills)."""
    col = E.col
    inner = (t_env.from_elements([(1, 1), (2, 2), (1, 1), (2, 2), (1, 1), (3, 3)], ["k", "v"])
             .group_by(col("k")).select(col("k"), col("v").sum.alias("s")))
    return (inner.add_columns((col("s") % 3).alias("m"))
            .group_by(col("m")).select(col("m"), col("s").sum.alias("sum_s"),
                                       col("k").count.alias("n")))


@case("global_aggregate_empties", description=(
    "Global aggregate (select with aggregates, no group_by) over an inner aggregate with "
    "one key: each -U of the inner key empties the global group (-D), the +U refills it "
    "(+I)."))
def global_aggregate_empties(t_env, E):
    col = E.col
    inner = (t_env.from_elements([(1, 5), (1, 3), (1, -8)], ["k", "v"])
             .group_by(col("k")).select(col("k"), col("v").sum.alias("s")))
    return inner.select(col("s").sum.alias("sum_s"), col("s").count.alias("n"),
                        col("s").max.alias("max_s"))


@case("global_aggregate_over_retracting_input")
def global_aggregate_over_retracting_input(t_env, E):
    """Global SUM/COUNT/MIN/MAX (no group_by) over the retracting inner SUM(v) GROUP BY k."""
    col = E.col
    s = col("s")
    return _inner_sum(t_env, E).select(s.sum.alias("sum_s"), s.count.alias("n"),
                                       s.min.alias("min_s"), s.max.alias("max_s"))


@case("global_aggregate_over_empty_input", description=(
    "Global COUNT(*)/SUM over an input filtered to nothing, streaming: no output at all."))
def global_aggregate_over_empty_input(t_env, E):
    col = E.col
    return (_kv(t_env, E).where(col("v") > 1000)
            .select(E.lit(1).count.alias("n"), col("v").sum.alias("sum_v")))


@case("batch_global_aggregate_over_empty_input", mode="batch", description=(
    "Batch version of global_aggregate_over_empty_input: SQL semantics give one row "
    "(0, null) in batch mode."))
def batch_global_aggregate_over_empty_input(t_env, E):
    return global_aggregate_over_empty_input(t_env, E)


@case("unchanged_aggregate_value_emits_nothing")
def unchanged_aggregate_value_emits_nothing(t_env, E):
    """Inputs that leave every output column of the group aggregate unchanged produce no
    output at all (a null v for SUM/MAX/MIN; a new value that is not a new max/min)."""
    col = E.col
    v = col("v")
    src = _kv_nullable(t_env, E, [(1, 5), (1, None), (1, 0), (2, 3), (2, 1), (2, 2), (1, 5)])
    return src.group_by(col("k")).select(col("k"), v.max.alias("max_v"),
                                         v.min.alias("min_v"))


@case("unchanged_value_through_two_levels")
def unchanged_value_through_two_levels(t_env, E):
    """Outer MAX(s) where inner updates do not change the outer max: the outer emits
    nothing for them, though it receives -U/+U pairs."""
    col = E.col
    inner = (t_env.from_elements([(1, 10), (2, 1), (2, 2), (3, 4), (2, -1), (1, 0)],
                                 ["k", "v"])
             .group_by(col("k")).select(col("k"), col("v").sum.alias("s")))
    return (inner.add_columns(lit_zero(E).alias("g"))
            .group_by(col("g")).select(col("g"), col("s").max.alias("max_s")))


@case("unchanged_final_value_after_rewrite", description=(
    "STDDEV_POP of BIGINT is planned as $WELFORD_M2(x), COUNT(x) plus a projection; an "
    "input that changes those sums but not the (integer) result still emits -U/+U with "
    "equal values -- the 'no change, no output' rule applies to the aggregate node's "
    "outputs, not to the final projected value. (AVG alone is a real aggregate and emits "
    "nothing when unchanged; see unchanged_avg_emits_nothing.)"))
def unchanged_final_value_after_rewrite(t_env, E):
    col = E.col
    src = t_env.from_elements([(1, 2), (1, 3), (2, 4), (2, 4)], ["k", "v"])
    return src.group_by(col("k")).select(col("k"), col("v").stddev_pop.alias("sd"))


@case("unchanged_avg_with_var_pop_still_emits", description=(
    "AVG(v) with VAR_POP(v) in the same select: Flink's reduce rule then plans AVG as "
    "SUM0(v)/COUNT(v) too, so a row that leaves both visible values unchanged (avg 3, "
    "var_pop 0) still changes the hidden COUNT and emits -U/+U with equal values."))
def unchanged_avg_with_var_pop_still_emits(t_env, E):
    col = E.col
    src = t_env.from_elements([(1, 2), (1, 4), (1, 3), (1, 3)], ["k", "v"])
    return src.group_by(col("k")).select(col("k"), col("v").avg.alias("avg_v"),
                                         col("v").var_pop.alias("var_pop_v"))


@case("unchanged_avg_emits_nothing")
def unchanged_avg_emits_nothing(t_env, E):
    """AVG that stays the same when a row equal to the average arrives: no output."""
    col = E.col
    src = t_env.from_elements([(1, 2), (1, 4), (1, 3), (1, 3)], ["k", "v"])
    return src.group_by(col("k")).select(col("k"), col("v").avg.alias("avg_v"))


# --------------------------------------------------------------------------------------
# Filters and projections
# --------------------------------------------------------------------------------------

@case("where_over_aggregate")
def where_over_aggregate(t_env, E):
    """WHERE s > 3 over the retracting inner SUM(v) GROUP BY k: -U and +U are filtered
    independently, so a -U may pass while its +U is dropped (and vice versa)."""
    col = E.col
    return (_inner_sum(t_env, E).where(col("s") > 3)
            .select(col("k"), col("s")))


@case("filter_before_aggregate_boolean_logic")
def filter_before_aggregate_boolean_logic(t_env, E):
    """filter((v > 0 & k < 5) | v == -7) before SUM/COUNT GROUP BY k."""
    col = E.col
    pred = ((col("v") > 0) & (col("k") < 5)) | (col("v") == -7)
    return (_kv(t_env, E).filter(pred).group_by(col("k"))
            .select(col("k"), col("v").sum.alias("sum_v"), col("v").count.alias("n")))


@case("projection_arithmetic")
def projection_arithmetic(t_env, E):
    """Stateless select/add_columns/alias: BIGINT and DOUBLE + - * / %, comparisons, with a
    null operand. Pins integer division and the sign of % for negatives."""
    col = E.col
    D = E.DataTypes
    schema = D.ROW([D.FIELD("a", D.BIGINT()), D.FIELD("b", D.BIGINT()),
                    D.FIELD("x", D.DOUBLE())])
    src = t_env.from_elements([(7, 2, 1.5), (-7, 3, -0.5), (0, -4, 2.0), (None, 5, None)],
                              schema)
    a, b, x = col("a"), col("b"), col("x")
    return (src.select(a, b, x, (a + b).alias("a_plus_b"), (a - b).alias("a_minus_b"),
                       (a * b).alias("a_times_b"), (a / b).alias("a_div_b"),
                       (a % b).alias("a_mod_b"), (a + 1).alias("a_plus_1"))
            .add_columns((x * 2).alias("x_times_2"), (a + x).alias("a_plus_x"),
                         (a > b).alias("a_gt_b"), (a == b).alias("a_eq_b"))
            .alias("a", "b", "x", "apb", "amb", "atb", "adb", "amodb", "ap1", "xt2", "apx",
                   "agtb", "aeqb"))


@case("batch_projection_arithmetic", mode="batch", deterministic=False,
      description="Batch version of projection_arithmetic.")
def batch_projection_arithmetic(t_env, E):
    return projection_arithmetic(t_env, E)
