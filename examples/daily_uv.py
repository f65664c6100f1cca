"""The daily-UV example of Flink's mini-batch design, run on Spark by changeflow.

A two-level aggregation: distinct users per (day, user_id % 10) bucket, summed per
day. Without mini-batch every input row produces its own changes, and the outer
level shows intermediate values (the total drops from 2 to 1 before reaching 3),
exactly as Flink does. With mini-batch the whole input is one bundle: each key
changes at most once per bundle and no intermediate value escapes.
"""

from changeflow.table import EnvironmentSettings, TableEnvironment
from changeflow.table.expressions import col

ROWS = [(1, "2023-12-19"), (2, "2023-12-19"), (11, "2023-12-19")]


def daily_uv(t_env):
    src = t_env.from_elements(ROWS, ["user_id", "day"])
    inner = (src.add_columns((col("user_id") % 10).alias("b"))
                .group_by(col("day"), col("b"))
                .select(col("day"), col("b"), col("user_id").count.distinct.alias("cnt")))
    return inner.group_by(col("day")).select(col("day"), col("cnt").sum.alias("total"))


def main() -> None:
    t_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    print("mini-batch off:")
    daily_uv(t_env).execute().print()

    t_env.get_config().set("table.exec.mini-batch.enabled", "true")
    t_env.get_config().set("table.exec.mini-batch.allow-latency", "5 s")
    t_env.get_config().set("table.exec.mini-batch.size", "1000")
    print("mini-batch on:")
    result = daily_uv(t_env)
    print(result.explain())
    with result.execute().collect() as rows:
        for r in rows:
            print(r.get_row_kind(), r)


if __name__ == "__main__":
    main()
