"""Nexmark's DDL, views and queries q1 (streaming) and q2 (batch) on Spark, against pandas over the generator's rows."""

import decimal

import pandas as pd

from changeflow.connectors.nexmark import NexmarkSource
from changeflow.sql.ddl import parse_create_table

# nexmark-flink/src/main/resources/queries/ddl_gen.sql, its ${...} filled in ('base-time' is changeflow's).
DDL_GEN = """CREATE TABLE datagen (
    event_type int,
    person ROW<
        id  BIGINT,
        name  VARCHAR,
        emailAddress  VARCHAR,
        creditCard  VARCHAR,
        city  VARCHAR,
        state  VARCHAR,
        `dateTime` TIMESTAMP(3),
        extra  VARCHAR>,
    auction ROW<
        id  BIGINT,
        itemName  VARCHAR,
        description  VARCHAR,
        initialBid  BIGINT,
        reserve  BIGINT,
        `dateTime`  TIMESTAMP(3),
        expires  TIMESTAMP(3),
        seller  BIGINT,
        category  BIGINT,
        extra  VARCHAR>,
    bid ROW<
        auction  BIGINT,
        bidder  BIGINT,
        price  BIGINT,
        channel  VARCHAR,
        url  VARCHAR,
        `dateTime`  TIMESTAMP(3),
        extra  VARCHAR>,
    `dateTime` AS
        CASE
            WHEN event_type = 0 THEN person.`dateTime`
            WHEN event_type = 1 THEN auction.`dateTime`
            ELSE bid.`dateTime`
        END,
    WATERMARK FOR `dateTime` AS `dateTime` - INTERVAL '4' SECOND
) WITH (
    'connector' = 'nexmark',
    'first-event.rate' = '1000',
    'next-event.rate' = '1000',
    'events.num' = '3000',
    'person.proportion' = '1',
    'auction.proportion' = '3',
    'bid.proportion' = '46',
    'base-time' = '1700000000000'
)"""

# nexmark-flink/src/main/resources/queries/ddl_views.sql (${NEXMARK_TABLE} is datagen).
DDL_VIEWS = [
    """CREATE VIEW person AS
SELECT
    person.id,
    person.name,
    person.emailAddress,
    person.creditCard,
    person.city,
    person.state,
    `dateTime`,
    person.extra
FROM datagen WHERE event_type = 0""",
    """CREATE VIEW auction AS
SELECT
    auction.id,
    auction.itemName,
    auction.description,
    auction.initialBid,
    auction.reserve,
    `dateTime`,
    auction.expires,
    auction.seller,
    auction.category,
    auction.extra
FROM datagen WHERE event_type = 1""",
    """CREATE VIEW bid AS
SELECT
    bid.auction,
    bid.bidder,
    bid.price,
    bid.channel,
    bid.url,
    `dateTime`,
    bid.extra
FROM datagen WHERE event_type = 2""",
]

# q1.sql and q2.sql: the queries their INSERTs run.
Q1 = """SELECT
    auction,
    bidder,
    0.908 * price as price, -- convert dollar to euro
    `dateTime`,
    extra
FROM bid"""
Q2 = "SELECT auction, price FROM bid WHERE MOD(auction, 123) = 0"


def _setup(t_env) -> None:
    t_env.execute_sql(DDL_GEN)
    for view in DDL_VIEWS:
        t_env.execute_sql(view)


def _bids() -> pd.DataFrame:
    table, _ = parse_create_table(DDL_GEN)
    rows = NexmarkSource(table, streaming=True).rows()
    fields = ["auction", "bidder", "price", "channel", "url", "dateTime", "extra"]
    return pd.DataFrame([dict(zip(fields, r[3], strict=True)) for r in rows if r[0] == 2])


def test_nexmark_q1_streaming_and_q2_batch_match_pandas(stream_env, batch_env):
    bids = _bids()
    assert len(bids) == 3000 * 46 // 50
    _setup(stream_env)
    assert "WatermarkAssigner(rowtime=[dateTime]" in stream_env.sql_query(Q1).explain()
    got = sorted(tuple(r) for r in stream_env.execute_sql(Q1).collect())
    want = sorted((a, b, (decimal.Decimal("0.908") * p).quantize(decimal.Decimal("0.001")), t.to_pydatetime(), x)
                  for a, b, p, t, x in zip(bids.auction, bids.bidder, bids.price, bids.dateTime, bids.extra,
                                           strict=True))
    assert got == want

    _setup(batch_env)
    got = sorted(tuple(r) for r in batch_env.execute_sql(Q2).collect())
    hits = bids[bids.auction % 123 == 0]
    assert sorted(zip(hits.auction.tolist(), hits.price.tolist(), strict=True)) == got and got


# q5.sql (hot items): the query its INSERT runs.
Q5 = """SELECT AuctionBids.auction, AuctionBids.num
 FROM (
   SELECT
     auction,
     count(*) AS num,
     window_start AS starttime,
     window_end AS endtime
     FROM TABLE(
             HOP(TABLE bid, DESCRIPTOR(dateTime), INTERVAL '2' SECOND, INTERVAL '10' SECOND))
     GROUP BY auction, window_start, window_end
 ) AS AuctionBids
 JOIN (
   SELECT
     max(CountBids.num) AS maxn,
     CountBids.starttime,
     CountBids.endtime
   FROM (
     SELECT
       count(*) AS num,
       window_start AS starttime,
       window_end AS endtime
     FROM TABLE(
                HOP(TABLE bid, DESCRIPTOR(dateTime), INTERVAL '2' SECOND, INTERVAL '10' SECOND))
     GROUP BY auction, window_start, window_end
     ) AS CountBids
   GROUP BY CountBids.starttime, CountBids.endtime
 ) AS MaxBids
 ON AuctionBids.starttime = MaxBids.starttime AND
    AuctionBids.endtime = MaxBids.endtime AND
    AuctionBids.num >= MaxBids.maxn"""


def test_nexmark_q5_plans_window_aggregations_and_matches_pandas(stream_env):
    """q5: the per-window maximum is a window aggregation over the windowed counts (window-attached,
    as Flink plans it), joined to them by a window join without keys (as Flink plans it); the two
    scans of bid are two streams, each with its watermark; insert-only, one row per window's
    hottest auctions. 100 events a second spread the 3,000 events over 30 s (about 15 windows)."""
    ddl = DDL_GEN.replace("'first-event.rate' = '1000'", "'first-event.rate' = '100'") \
        .replace("'next-event.rate' = '1000'", "'next-event.rate' = '100'")
    table, _ = parse_create_table(ddl)
    rows = [r for r in NexmarkSource(table, streaming=True).rows() if r[0] == 2]
    bids = pd.DataFrame({"auction": [r[3][0] for r in rows], "ts": [r[3][5] for r in rows]})
    stream_env.execute_sql(ddl)
    for view in DDL_VIEWS:
        stream_env.execute_sql(view)
    plan = stream_env.sql_query(Q5).explain()
    assert "WindowJoin(leftWindow=[HOP(win_start=[starttime], win_end=[endtime]" in plan
    assert "WindowAggregate(window=[HOP(win_start=[starttime], win_end=[endtime], slide=[2 s], size=[10 s])]" in plan
    assert "GroupAggregate" not in plan and "changelogMode=[I,UB,UA]" not in plan
    result = stream_env.execute_sql(Q5)
    with result.collect() as changes:
        got = sorted((str(r.get_row_kind()), r[0], r[1]) for r in changes)

    # Each bid in the five 10 s windows (slide 2 s) that hold it; the generator's bids are in time
    # order, so none is late.
    assert bids.ts.is_monotonic_increasing
    ms = bids.ts.astype("datetime64[ms]").astype("int64")
    per_window = []
    for back in range(5):
        start = ms - ms % 2_000 - back * 2_000
        per_window.append(pd.DataFrame({"start": start, "auction": bids.auction}))
    counts = pd.concat(per_window).groupby(["start", "auction"]).size().rename("num").reset_index()
    hottest = counts[counts.num == counts.groupby("start").num.transform("max")]
    want = sorted(("+I", a, n) for a, n in zip(hottest.auction, hottest.num, strict=True))
    assert got == want and len({s for s in hottest.start}) >= 15
