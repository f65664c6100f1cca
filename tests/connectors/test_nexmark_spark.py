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
