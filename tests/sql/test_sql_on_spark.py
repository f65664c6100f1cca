"""SQL queries end to end on Spark, through ``plan_query`` and the existing runtimes.

Expected rows are Flink 2.3's for the same queries and data (recorded with
PyFlink 2.3 in batch mode; the daily-UV changelogs are the mini-batch seed's).
"""

from __future__ import annotations

import datetime
import decimal

import pytest

from changeflow.common.types import DataTypes as T
from changeflow.sql import plan_query

pytestmark = pytest.mark.spark

ROWS = [(1, " Alice ", 7, 2.5, "2024-03-05 10:20:30", "a,b,c"), (2, None, -7, -1.25, "bad", "x"),
        (3, "bob", 12, 0.0, "2023-12-31 23:59:59", "")]
SCHEMA = T.ROW([T.FIELD("id", T.BIGINT()), T.FIELD("name", T.STRING()), T.FIELD("v", T.INT()),
                T.FIELD("d", T.DOUBLE()), T.FIELD("s", T.STRING()), T.FIELD("csv", T.STRING())])

DAILY_UV = """
SELECT `day`, SUM(cnt) total
FROM (
SELECT `day`, MOD(user_id, 10), COUNT(DISTINCT user_id) as cnt
FROM source GROUP BY `day`, MOD(user_id, 10))
GROUP BY `day`
"""


def run(t_env, sql, **tables):
    plans = {name: table._plan for name, table in tables.items()}
    result = t_env._execute(plan_query(sql, plans.__getitem__))
    with result.collect() as rows:
        return [(str(r.get_row_kind()), tuple(r)) for r in rows]


def values(t_env, sql):
    return sorted((row for _, row in run(t_env, sql, t=t_env.from_elements(ROWS, SCHEMA))),
                  key=lambda r: tuple((x is None, str(x)) for x in r))


def test_string_numeric_and_null_functions(batch_env):
    assert values(batch_env, (
        "SELECT id, UPPER(TRIM(name)), CONCAT(name, '!'), TRIM(name) || '?', CHAR_LENGTH(name), "
        "SUBSTRING(TRIM(name), 2, 3), REPLACE(name, 'l', 'L'), COALESCE(name, 'none'), NULLIF(v, 7), "
        "IFNULL(name, 'z'), CASE WHEN v > 0 THEN 'pos' WHEN v < 0 THEN 'neg' ELSE 'zero' END, MOD(v, 5), v / 2, "
        "v * 1.5, CAST(v AS DOUBLE) / 4, name LIKE '%li%', v IN (7, 12), v BETWEEN 0 AND 10, name IS NULL, "
        "SPLIT_INDEX(csv, ',', 1), LOWER(name), ABS(v), ROUND(d, 1), FLOOR(d), CEIL(d), POSITION('b' IN csv), "
        "LPAD(csv, 4, '*') FROM t")) == [
        (1, "ALICE", " Alice !", "Alice?", 7, "lic", " ALice ", " Alice ", None, " Alice ", "pos", 2, 3,
         decimal.Decimal("10.5"), 1.75, True, True, True, False, "b", " alice ", 7, 2.5, 2.0, 3.0, 3, "a,b,"),
        (2, None, None, None, None, None, None, "none", -7, "z", "neg", -2, -3, decimal.Decimal("-10.5"), -1.75,
         None, False, False, True, None, None, 7, -1.3, -2.0, -1.0, 0, "***x"),
        (3, "BOB", "bob!", "bob?", 3, "ob", "bob", "bob", 12, "bob", "pos", 2, 6, decimal.Decimal("18.0"), 3.0,
         False, True, False, False, None, "bob", 12, 0.0, 0.0, 0.0, 0, "****"),
    ]


def test_date_and_time_functions(batch_env):
    assert values(batch_env, (
        "SELECT id, TO_TIMESTAMP(s), DATE_FORMAT(TO_TIMESTAMP(s), 'yyyy/MM/dd HH'), "
        "EXTRACT(YEAR FROM TO_TIMESTAMP(s)), "
        "MONTH(TO_TIMESTAMP(s)), HOUR(TO_TIMESTAMP(s)), CAST(TO_TIMESTAMP(s) AS DATE), TO_DATE(SUBSTRING(s, 1, 10)), "
        "CAST(id AS STRING) || 'x', CONCAT_WS('-', TRIM(name), csv) FROM t")) == [
        (1, datetime.datetime(2024, 3, 5, 10, 20, 30), "2024/03/05 10", 2024, 3, 10, datetime.date(2024, 3, 5),
         datetime.date(2024, 3, 5), "1x", "Alice-a,b,c"),
        (2, None, None, None, None, None, None, None, "2x", "x"),
        (3, datetime.datetime(2023, 12, 31, 23, 59, 59), "2023/12/31 23", 2023, 12, 23, datetime.date(2023, 12, 31),
         datetime.date(2023, 12, 31), "3x", "bob-"),
    ]


def test_having_distinct_and_union_all(batch_env):
    assert values(batch_env, "SELECT v % 2 AS parity, COUNT(*) AS c, SUM(d) AS s, LISTAGG(TRIM(name), ';') AS names "
                             "FROM t WHERE id < 10 GROUP BY v % 2 HAVING COUNT(*) >= 1") == [
        (-1, 1, -1.25, None), (0, 1, 0.0, "bob"), (1, 1, 2.5, "Alice")]
    assert values(batch_env, "SELECT DISTINCT v > 0 AS positive FROM t") == [(False,), (True,)]
    assert values(batch_env, "SELECT id, v FROM t WHERE v > 0 UNION ALL SELECT id * 10, CAST(id AS INT) FROM t") == [
        (1, 7), (10, 1), (20, 2), (3, 12), (30, 3)]


UV_ROWS = [(1, "2023-12-19"), (2, "2023-12-19"), (11, "2023-12-19")]


def test_daily_uv_verbatim_without_mini_batch_emits_every_intermediate_value(stream_env):
    source = stream_env.from_elements(UV_ROWS, ["user_id", "day"])
    assert run(stream_env, DAILY_UV, source=source) == [
        ("+I", ("2023-12-19", 1)), ("-U", ("2023-12-19", 1)), ("+U", ("2023-12-19", 2)),
        ("-U", ("2023-12-19", 2)), ("+U", ("2023-12-19", 1)), ("-U", ("2023-12-19", 1)),
        ("+U", ("2023-12-19", 3)),
    ]


def test_daily_uv_verbatim_with_mini_batch_folds_the_bundle(stream_env):
    for key, value in (("table.exec.mini-batch.enabled", "true"), ("table.exec.mini-batch.allow-latency", "5 s"),
                       ("table.exec.mini-batch.size", "1000")):
        stream_env.get_config().set(key, value)
    source = stream_env.from_elements(UV_ROWS, ["user_id", "day"])
    assert run(stream_env, DAILY_UV, source=source) == [("+I", ("2023-12-19", 3))]


def test_proctime_and_current_timestamp_are_the_current_time_in_milliseconds(batch_env):
    import datetime as dt

    before = dt.datetime.now(dt.timezone.utc) - dt.timedelta(seconds=1)
    rows = values(batch_env, "SELECT id, PROCTIME() AS pt, CURRENT_TIMESTAMP, LOCALTIMESTAMP, "
                             "COALESCE(name, NULL, 'z') FROM t")
    assert [r[0] for r in rows] == [1, 2, 3]
    for _, pt, now, local, _ in rows:
        assert pt.microsecond % 1000 == 0 and now.microsecond % 1000 == 0 and local.microsecond % 1000 == 0
        assert pt.astimezone(dt.timezone.utc) >= before
    assert [r[4] for r in rows] == [" Alice ", "z", "bob"]


KV_ROWS = [(1, "a", 5), (2, "b", -1), (3, "a", -2), (4, "a", 7)]


def test_streaming_group_by_expression_with_where_and_having(stream_env):
    t = stream_env.from_elements(KV_ROWS, ["id", "k", "v"])
    sign = "CASE WHEN v > 0 THEN 'pos' ELSE 'neg' END"
    assert run(stream_env, f"SELECT k, {sign} AS sign, COUNT(*) AS c FROM t WHERE id > 0 GROUP BY k, {sign} "
                           "HAVING COUNT(*) >= 1", t=t) == [
        ("+I", ("a", "pos", 1)), ("+I", ("b", "neg", 1)), ("+I", ("a", "neg", 1)),
        ("-U", ("a", "pos", 1)), ("+U", ("a", "pos", 2)),
    ]


def test_streaming_having_passes_update_kinds_through_as_flink(stream_env):
    # The first count of 'a' (1) fails HAVING, so Flink's changelog starts with +U, not +I.
    t = stream_env.from_elements(KV_ROWS, ["id", "k", "v"])
    assert run(stream_env, "SELECT k, COUNT(*) AS c FROM t GROUP BY k HAVING COUNT(*) > 1", t=t) == [
        ("+U", ("a", 2)), ("-U", ("a", 2)), ("+U", ("a", 3)),
    ]


RANK_ROWS = [(1, "a", 5), (2, "b", -1), (3, "a", -2), (4, "a", 7), (5, "b", 3)]
REGIONS = [(1, "eu"), (4, "us"), (9, "cn")]
TOP2 = "SELECT k, v{rn} FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY k ORDER BY v DESC) AS rn FROM t) WHERE rn <= 2"


def test_streaming_top_n_without_and_with_the_row_number(stream_env):
    t = stream_env.from_elements(RANK_ROWS, ["id", "k", "v"])
    assert run(stream_env, TOP2.format(rn=""), t=t) == [
        ("+I", ("a", 5)), ("+I", ("b", -1)), ("+I", ("a", -2)), ("-D", ("a", -2)), ("+I", ("a", 7)),
        ("+I", ("b", 3)),
    ]
    assert run(stream_env, TOP2.format(rn=", rn"), t=t) == [
        ("+I", ("a", 5, 1)), ("+I", ("b", -1, 1)), ("+I", ("a", -2, 2)), ("-U", ("a", 5, 1)), ("+U", ("a", 7, 1)),
        ("-U", ("a", -2, 2)), ("+U", ("a", 5, 2)), ("-U", ("b", -1, 1)), ("+U", ("b", 3, 1)), ("+I", ("b", -1, 2)),
    ]


def test_streaming_deduplicate_keep_last_row_on_proctime(stream_env):
    t = stream_env.from_elements(RANK_ROWS, ["id", "k", "v"])
    tp = plan_query("SELECT *, PROCTIME() AS pt FROM t", {"t": t._plan}.__getitem__)
    result = stream_env._execute(plan_query(
        "SELECT id, k FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY k ORDER BY pt DESC) AS rn FROM tp) WHERE rn = 1",
        {"tp": tp}.__getitem__))
    with result.collect() as rows:
        assert [(str(r.get_row_kind()), tuple(r)) for r in rows] == [
            ("+I", (1, "a")), ("+I", (2, "b")), ("-U", (1, "a")), ("+U", (3, "a")), ("-U", (3, "a")),
            ("+U", (4, "a")), ("-U", (2, "b")), ("+U", (5, "b")),
        ]


def test_batch_outer_joins(batch_env):
    t = batch_env.from_elements(RANK_ROWS, ["id", "k", "v"])
    u = batch_env.from_elements(REGIONS, ["id", "region"])
    left = run(batch_env, "SELECT t.id, k, region FROM t LEFT JOIN u ON t.id = u.id", t=t, u=u)
    assert sorted(row for _, row in left) == [(1, "a", "eu"), (2, "b", None), (3, "a", None), (4, "a", "us"),
                                              (5, "b", None)]
    full = run(batch_env, "SELECT t.id, u.id, region FROM t FULL OUTER JOIN u ON t.id = u.id AND v > 0", t=t, u=u)
    assert sorted((row for _, row in full), key=str) == sorted(
        [(1, 1, "eu"), (4, 4, "us"), (None, 9, "cn"), (5, None, None), (3, None, None), (2, None, None)], key=str)
