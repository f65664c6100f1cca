"""Conformance cases for Python aggregate functions (``udaf``, ``udtaf``), shared by the
Flink golden recorder (``record_flink_udaf.py``) and changeflow's tests.

Each case is ``build(t_env, E) -> Table``. ``E`` holds ``col``, ``lit``, ``DataTypes``,
``Row``, ``udaf``, ``udtaf``, ``AggregateFunction`` and ``TableAggregateFunction`` from
``pyflink`` (recorder) or ``changeflow`` (tests); this module imports neither. The
function classes are made inside the builds (closures), so PyFlink's cloudpickle ships
them by value to its Python workers.

PyFlink folds a Python aggregate's input per bundle and key (its ``GroupAggFunction``
buffers a bundle, then emits one change per key), so its changelog depends on bundle
boundaries: every streaming case is compared on the materialized result
(``deterministic=False``). A case whose golden has ``error`` pins Flink's refusal.
"""

from __future__ import annotations

from conformance.table_cases import MINIBATCH, Case

__all__ = ["CASES", "TWO_PHASE"]

CASES: dict[str, Case] = {}

TWO_PHASE = {**MINIBATCH, "table.optimizer.agg-phase-strategy": "TWO_PHASE"}


def case(name: str, *, mode: str = "streaming", config: dict | None = None, deterministic: bool = False):
    def register(build):
        CASES[name] = Case(name=name, build=build, mode=mode, config=dict(config or {}),
                           deterministic=deterministic, description=" ".join((build.__doc__ or "").split()))
        return build
    return register


# --- the functions -------------------------------------------------------------------


def _sum_class(E, with_retract=True, with_merge=True):
    """A BIGINT sum kept in a one-element list accumulator (PyFlink's documented style)."""

    class MySum(E.AggregateFunction):
        def create_accumulator(self):
            return [0, 0]  # sum, non-null count

        def accumulate(self, accumulator, value):
            if value is not None:
                accumulator[0] += value
                accumulator[1] += 1

        def get_value(self, accumulator):
            return accumulator[0] if accumulator[1] else None

        def get_result_type(self):
            return E.DataTypes.BIGINT()

        def get_accumulator_type(self):
            return E.DataTypes.ARRAY(E.DataTypes.BIGINT())

    attrs = {}
    if with_retract:
        def retract(self, accumulator, value):
            if value is not None:
                accumulator[0] -= value
                accumulator[1] -= 1
        attrs["retract"] = retract
    if with_merge:
        def merge(self, accumulator, accumulators):
            for other in accumulators:
                accumulator[0] += other[0]
                accumulator[1] += other[1]
        attrs["merge"] = merge
    return type("MySum", (MySum,), attrs)


def _weighted_avg_class(E):
    """Two arguments, a ROW result (avg, count): for ``aggregate(...).alias(...)``."""

    class WeightedAvgAndCount(E.AggregateFunction):
        def create_accumulator(self):
            return [0, 0, 0]  # weighted sum, weight, rows

        def accumulate(self, accumulator, value, weight):
            accumulator[0] += value * weight
            accumulator[1] += weight
            accumulator[2] += 1

        def retract(self, accumulator, value, weight):
            accumulator[0] -= value * weight
            accumulator[1] -= weight
            accumulator[2] -= 1

        def merge(self, accumulator, accumulators):
            for other in accumulators:
                for i in range(3):
                    accumulator[i] += other[i]

        def get_value(self, accumulator):
            avg = accumulator[0] // accumulator[1] if accumulator[1] else None
            return E.Row(avg, accumulator[2])

        def get_result_type(self):
            return E.DataTypes.ROW([E.DataTypes.FIELD("avg", E.DataTypes.BIGINT()),
                                    E.DataTypes.FIELD("cnt", E.DataTypes.BIGINT())])

        def get_accumulator_type(self):
            return E.DataTypes.ARRAY(E.DataTypes.BIGINT())

    return WeightedAvgAndCount


def _top2_class(E):
    """Flink's documented Top2 table aggregate, with retract (a value -> count map)."""

    class Top2(E.TableAggregateFunction):
        def create_accumulator(self):
            return [{}]

        def accumulate(self, accumulator, value):
            if value is not None:
                accumulator[0][value] = accumulator[0].get(value, 0) + 1

        def retract(self, accumulator, value):
            if value is not None:
                left = accumulator[0].get(value, 0) - 1
                if left > 0:
                    accumulator[0][value] = left
                else:
                    accumulator[0].pop(value, None)

        def emit_value(self, accumulator):
            values = sorted((v for v, n in accumulator[0].items() for _ in range(n)), reverse=True)
            for rank, value in enumerate(values[:2], start=1):
                yield E.Row(value, rank)

        def get_result_type(self):
            return E.DataTypes.ROW([E.DataTypes.FIELD("v", E.DataTypes.BIGINT()),
                                    E.DataTypes.FIELD("rank", E.DataTypes.BIGINT())])

        def get_accumulator_type(self):
            return E.DataTypes.ARRAY(E.DataTypes.MAP(E.DataTypes.BIGINT(), E.DataTypes.BIGINT()))

    return Top2


# --- inputs ----------------------------------------------------------------------------

ROWS = [(1, 10), (2, 3), (1, 5), (3, 7), (2, 8), (1, 2), (3, 1), (2, 4), (1, 7), (4, 6)]


def _source(t_env):
    return t_env.from_elements(ROWS, ["k", "v"])


def _retracting(t_env, E):
    """k -> MAX(v) per k: each new max retracts the previous row (a retracting changelog)."""
    t = t_env.from_elements([(1, 3), (1, 5), (2, 4), (1, 9), (2, 6), (3, 2), (2, 1), (3, 8), (4, 8)],
                            ["k", "v"])
    return t.group_by(E.col("k")).select(E.col("k"), E.col("v").max.alias("m"))


# --- cases -----------------------------------------------------------------------------


@case("udaf_grouped_select")
def udaf_grouped_select(t_env, E):
    """A udaf in group_by(...).select(...) beside a built-in aggregate."""
    my_sum = E.udaf(_sum_class(E)(), name="my_sum")
    return _source(t_env).group_by(E.col("k")).select(
        E.col("k"), my_sum(E.col("v")).alias("s"), E.col("v").count.alias("n"))


@case("udaf_global_select")
def udaf_global_select(t_env, E):
    """A udaf without group_by (a global aggregate)."""
    my_sum = E.udaf(_sum_class(E)(), name="my_sum")
    return _source(t_env).select(my_sum(E.col("v")).alias("s"))


@case("udaf_over_retracting_input")
def udaf_over_retracting_input(t_env, E):
    """A udaf with retract over an aggregate's updating output: max per k, summed by parity."""
    my_sum = E.udaf(_sum_class(E)(), name="my_sum")
    inner = _retracting(t_env, E).add_columns((E.col("m") % 2).alias("p"))
    return inner.group_by(E.col("p")).select(E.col("p"), my_sum(E.col("m")).alias("s"), E.col("k").count.alias("n"))


@case("udaf_global_over_retracting_input")
def udaf_global_over_retracting_input(t_env, E):
    """A global udaf over an updating input."""
    my_sum = E.udaf(_sum_class(E)(), name="my_sum")
    return _retracting(t_env, E).select(my_sum(E.col("m")).alias("s"))


@case("udaf_without_retract_over_retracting_input")
def udaf_without_retract_over_retracting_input(t_env, E):
    """A udaf without retract over updating input: Flink fails."""
    my_sum = E.udaf(_sum_class(E, with_retract=False)(), name="my_sum")
    inner = _retracting(t_env, E).add_columns((E.col("m") % 2).alias("p"))
    return inner.group_by(E.col("p")).select(E.col("p"), my_sum(E.col("m")).alias("s"))


@case("udaf_two_phase", config=TWO_PHASE)
def udaf_two_phase(t_env, E):
    """A udaf with merge under mini-batch and TWO_PHASE."""
    my_sum = E.udaf(_sum_class(E)(), name="my_sum")
    return _source(t_env).group_by(E.col("k")).select(E.col("k"), my_sum(E.col("v")).alias("s"))


@case("udaf_minibatch_over_retracting_input", config=TWO_PHASE)
def udaf_minibatch_over_retracting_input(t_env, E):
    """A udaf over updating input with mini-batch (two-phase asked for, one phase possible)."""
    return udaf_over_retracting_input(t_env, E)


@case("udaf_row_result_aggregate")
def udaf_row_result_aggregate(t_env, E):
    """group_by(...).aggregate(f(a, b).alias(...)).select(...): a ROW result expands."""
    wavg = E.udaf(_weighted_avg_class(E)(), name="wavg")
    return _source(t_env).group_by(E.col("k")).aggregate(
        wavg(E.col("v"), E.col("k")).alias("a", "c")).select(E.col("k"), E.col("a"), E.col("c"))


@case("udaf_row_result_global_aggregate")
def udaf_row_result_global_aggregate(t_env, E):
    """Table.aggregate(...) without group_by."""
    wavg = E.udaf(_weighted_avg_class(E)(), name="wavg")
    return _source(t_env).aggregate(wavg(E.col("v"), E.col("k")).alias("a", "c")).select(
        E.col("a"), E.col("c"))


@case("udtaf_top2")
def udtaf_top2(t_env, E):
    """group_by(k).flat_aggregate(top2).select(...): retracts its earlier rows per key."""
    top2 = E.udtaf(_top2_class(E)(), name="top2")
    return _source(t_env).group_by(E.col("k")).flat_aggregate(top2(E.col("v"))).select(
        E.col("k"), E.col("v"), E.col("rank"))


@case("udtaf_top2_global")
def udtaf_top2_global(t_env, E):
    """flat_aggregate without group_by."""
    top2 = E.udtaf(_top2_class(E)(), name="top2")
    return _source(t_env).flat_aggregate(top2(E.col("v")).alias("x", "r")).select(E.col("x"), E.col("r"))


@case("udtaf_top2_over_retracting_input")
def udtaf_top2_over_retracting_input(t_env, E):
    """Top2 with retract over an updating input."""
    top2 = E.udtaf(_top2_class(E)(), name="top2")
    inner = _retracting(t_env, E).add_columns((E.col("m") % 2).alias("p"))
    return inner.group_by(E.col("p")).flat_aggregate(top2(E.col("k"))).select(
        E.col("v"), E.col("rank"))


@case("sql_udaf_group_by")
def sql_udaf_group_by(t_env, E):
    """SQL: a registered udaf in a GROUP BY query."""
    t_env.create_temporary_function("my_sum", E.udaf(_sum_class(E)(), name="my_sum"))
    t_env.create_temporary_view("udaf_src", _source(t_env))
    return t_env.sql_query("SELECT k, my_sum(v) AS s FROM udaf_src GROUP BY k")


@case("pandas_udaf_streaming_group_by")
def pandas_udaf_streaming_group_by(t_env, E):
    """A pandas udaf in a streaming group aggregation: Flink refuses it."""
    mean = E.udaf(lambda v: int(v.mean()), result_type=E.DataTypes.BIGINT(), func_type="pandas", name="mean")
    return _source(t_env).group_by(E.col("k")).select(E.col("k"), mean(E.col("v")).alias("m"))


@case("batch_pandas_udaf_group_by", mode="batch")
def batch_pandas_udaf_group_by(t_env, E):
    """A pandas udaf in a batch group aggregation (Flink's pandas_udaf example shape)."""
    mean = E.udaf(lambda v: int(v.mean()), result_type=E.DataTypes.BIGINT(), func_type="pandas", name="mean")
    return _source(t_env).group_by(E.col("k")).select(E.col("k"), mean(E.col("v")).alias("m"))


@case("batch_udaf_group_by", mode="batch")
def batch_udaf_group_by(t_env, E):
    """A general udaf in a batch group aggregation."""
    my_sum = E.udaf(_sum_class(E)(), name="my_sum")
    return _source(t_env).group_by(E.col("k")).select(E.col("k"), my_sum(E.col("v")).alias("s"))


@case("batch_udtaf_top2", mode="batch")
def batch_udtaf_top2(t_env, E):
    """A table aggregate in batch mode."""
    top2 = E.udtaf(_top2_class(E)(), name="top2")
    return _source(t_env).group_by(E.col("k")).flat_aggregate(top2(E.col("v"))).select(
        E.col("k"), E.col("v"), E.col("rank"))
