"""End to end on Spark: Table API programs in streaming and batch mode."""

from __future__ import annotations

import pytest

from changeflow.common import RowKind
from changeflow.table.expressions import col

pytestmark = pytest.mark.spark

UV_ROWS = [(1, "2023-12-19"), (2, "2023-12-19"), (11, "2023-12-19")]


def daily_uv(t_env):
    src = t_env.from_elements(UV_ROWS, ["user_id", "day"])
    inner = (src.add_columns((col("user_id") % 10).alias("b")).group_by(col("day"), col("b"))
             .select(col("day"), col("b"), col("user_id").count.distinct.alias("cnt")))
    return inner.group_by(col("day")).select(col("day"), col("cnt").sum.alias("total"))


def changes(table):
    with table.execute().collect() as rows:
        return [(str(r.get_row_kind()), tuple(r)) for r in rows]


def test_daily_uv_without_mini_batch_emits_every_intermediate_value(stream_env):
    assert changes(daily_uv(stream_env)) == [
        ("+I", ("2023-12-19", 1)), ("-U", ("2023-12-19", 1)), ("+U", ("2023-12-19", 2)),
        ("-U", ("2023-12-19", 2)), ("+U", ("2023-12-19", 1)), ("-U", ("2023-12-19", 1)),
        ("+U", ("2023-12-19", 3)),
    ]


def test_daily_uv_with_mini_batch_folds_the_bundle(stream_env):
    stream_env.get_config().set("table.exec.mini-batch.enabled", "true")
    stream_env.get_config().set("table.exec.mini-batch.allow-latency", "5 s")
    stream_env.get_config().set("table.exec.mini-batch.size", "1000")
    assert changes(daily_uv(stream_env)) == [("+I", ("2023-12-19", 3))]


def test_mini_batch_size_bounds_the_bundle(stream_env):
    # Bundles of two rows: the first folds users 1 and 2, the second adds user 11.
    stream_env.get_config().set("table.exec.mini-batch.enabled", "true")
    stream_env.get_config().set("table.exec.mini-batch.allow-latency", "1 s")
    stream_env.get_config().set("table.exec.mini-batch.size", "2")
    assert changes(daily_uv(stream_env)) == [
        ("+I", ("2023-12-19", 2)), ("-U", ("2023-12-19", 2)), ("+U", ("2023-12-19", 3)),
    ]


def test_batch_mode_returns_the_final_result_as_inserts(batch_env):
    assert changes(daily_uv(batch_env)) == [("+I", ("2023-12-19", 3))]


def test_group_empties_and_emits_delete(stream_env):
    # Inner sums per k; the outer counts keys per sum. k=1 moves from sum 1 to sum 3,
    # so the group of sum 1 empties and is deleted.
    src = stream_env.from_elements([(1, 1), (1, 2)], ["k", "v"])
    inner = src.group_by(col("k")).select(col("k"), col("v").sum.alias("s"))
    outer = inner.group_by(col("s")).select(col("s"), col("k").count.alias("n"))
    assert changes(outer) == [("+I", (1, 1)), ("-D", (1, 1)), ("+I", (3, 1))]


def test_global_aggregate_and_filter_over_aggregate(stream_env, batch_env):
    rows = [(i % 3, i) for i in range(10)]
    for env in (stream_env, batch_env):
        src = env.from_elements(rows, ["k", "v"])
        per_key = src.group_by(col("k")).select(col("k"), col("v").sum.alias("s"))
        big = per_key.where(col("s") > 12).select(col("s").max.alias("m"), col("s").count.alias("c"))
        final = materialize(changes(big))
        assert final == [(18, 2)]


def materialize(changes_):
    table: list[tuple] = []
    for kind, values in changes_:
        if RowKind.from_short_string(kind).is_retraction():
            table.remove(values)
        else:
            table.append(values)
    return sorted(table)
