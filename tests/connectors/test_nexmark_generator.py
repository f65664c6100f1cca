"""The nexmark generator without Spark: nexmark's kinds, ids, event times, hot keys; the same events for a number."""

import re

import numpy as np
import pytest

from changeflow.connectors import ConnectorError
from changeflow.connectors.nexmark import NexmarkSource
from changeflow.connectors.nexmark_generator import BLOCK, NexmarkConfig, NexmarkGenerator
from changeflow.sql.ddl import parse_create_table

DDL = """CREATE TABLE datagen (
    event_type int,
    person ROW<id BIGINT, name VARCHAR, emailAddress VARCHAR, creditCard VARCHAR, city VARCHAR, state VARCHAR,
               `dateTime` TIMESTAMP(3), extra VARCHAR>,
    auction ROW<id BIGINT, itemName VARCHAR, description VARCHAR, initialBid BIGINT, reserve BIGINT,
                `dateTime` TIMESTAMP(3), expires TIMESTAMP(3), seller BIGINT, category BIGINT, extra VARCHAR>,
    bid ROW<auction BIGINT, bidder BIGINT, price BIGINT, channel VARCHAR, url VARCHAR, `dateTime` TIMESTAMP(3),
            extra VARCHAR>
) WITH ('connector' = 'nexmark'{options})"""


def _source(streaming: bool = True, **options: str) -> NexmarkSource:
    text = "".join(f", '{k}' = '{v}'" for k, v in options.items())
    table, _ = parse_create_table(DDL.format(options=text))
    return NexmarkSource(table, streaming)


def _list(values) -> list:
    return values.to_pylist() if hasattr(values, "to_pylist") else list(values)


def _generator(**settings) -> NexmarkGenerator:
    return NexmarkGenerator(NexmarkConfig(base_time_ms=1_000_000, **settings))


def test_proportions_over_10000_events():
    events = _generator().events(0, 10_000)
    assert np.bincount(events.event_type).tolist() == [200, 600, 9200]  # 1/3/46 of every 50 event ids
    # Event k has nexmark's event id k + 2: id % 50 == 0 is a person, 1..3 an auction, the rest bids.
    assert events.event_type[:4].tolist() == [1, 1, 2, 2] and events.event_type[48].tolist() == 0
    other = _generator(person_proportion=2, auction_proportion=2, bid_proportion=6).events(0, 10_000)
    assert np.bincount(other.event_type).tolist() == [2000, 2000, 6000]


def test_ids_follow_nexmarks_rules():
    events = _generator().events(0, 10_000)
    persons, auctions, bids = events.person, events.auction, events.bid
    assert persons["id"].tolist() == list(range(1001, 1201))  # consecutive from FIRST_PERSON_ID + 1
    assert auctions["id"].tolist() == list(range(1001, 1601))
    # A bid's auction is at most AUCTION_ID_LEAD past the last auction, and within 100 of it or hot.
    last_auction = np.maximum.accumulate(np.where(events.event_type == 1, np.arange(10_000), -1))
    last_id = {int(p): int(i) for p, i in zip(events.positions[1], auctions["id"], strict=True)}
    for pos, auction in zip(events.positions[2].tolist(), bids["auction"].tolist(), strict=True):
        newest = last_id[int(last_auction[pos])]
        assert 1000 <= auction <= newest + 10 and (auction >= newest - 100 or auction % 100 == 0)
    assert (bids["bidder"] >= 2000).all() and (bids["bidder"] <= 1200 + 10 + 2000).all()  # nexmark adds 1000 twice
    assert (auctions["seller"] >= 1000).all() and (auctions["seller"] <= 1200 + 10).all()
    assert set(auctions["category"].tolist()) == {10, 11, 12, 13, 14}
    assert (auctions["expires"] > auctions["dateTime"]).all()
    assert (auctions["reserve"] > auctions["initialBid"]).all()
    prices = bids["price"]
    assert prices.min() >= 100 and prices.max() <= 100_000_000
    assert 30_000 < np.median(prices) < 300_000  # 10^(6u) * 100: median 10^5


def test_event_times_are_monotone_by_the_first_event_rate():
    events = _generator(first_event_rate=1000).events(0, 10_000)
    assert events.timestamp_ms.tolist() == [1_000_000 + k + 1 for k in range(10_000)]  # 1 ms between events
    fast = _generator().events(0, 10_000).timestamp_ms  # 10,000/s: ten events a millisecond
    assert (np.diff(fast) >= 0).all() and fast[0] == 1_000_000 and fast[-1] == 1_001_000
    odd = _generator(first_event_rate=3).events(0, 5).timestamp_ms  # (long)(n * 333333.33..) / 1000
    assert (odd - 1_000_000).tolist() == [333, 666, 1000, 1333, 1666]
    events = _generator().events(0, 1000)
    assert (events.bid["dateTime"] == events.timestamp_ms[events.positions[2]]).all()


def test_same_event_for_the_same_number_however_ranges_are_cut():
    whole = _generator().events(0, 3 * BLOCK)
    pieces = _generator()
    parts = [pieces.events(0, 7), pieces.events(7, BLOCK), pieces.events(BLOCK + 7, 2 * BLOCK - 7)]
    for name in ("person", "auction", "bid"):
        for column, values in getattr(whole, name).items():
            joined = [v for p in parts for v in _list(getattr(p, name)[column])]
            assert joined == _list(values), (name, column)
    again = _source(**{"events.num": "300", "base-time": "0"}).rows()
    assert again == _source(**{"events.num": "300", "base-time": "0"}).rows()
    assert len(set(r[3] for r in again if r[0] == 2)) == len([r for r in again if r[0] == 2])  # bids differ


def test_hot_keys_take_nexmarks_shares():
    events = _generator().events(0, 50_000)
    # Hot auctions are multiples of 100 (half the bids), hot bidders 1 past one (3 in 4), hot sellers (3 in 4).
    assert 0.47 < (events.bid["auction"] % 100 == 0).mean() < 0.55
    assert 0.72 < (events.bid["bidder"] % 100 == 1).mean() < 0.80
    assert 0.70 < (events.auction["seller"] % 100 == 0).mean() < 0.82
    cold = _generator(hot_auction_ratio=1, hot_bidders_ratio=1).events(0, 50_000)
    assert (cold.bid["auction"] % 100 == 0).mean() < 0.05 and (cold.bid["bidder"] % 100 == 1).mean() < 0.05


def test_strings_have_nexmarks_shapes():
    events = _generator().events(0, 10_000)
    assert all(re.fullmatch(r"[a-z ]{0,6}@[a-z ]{0,4}\.com", e) for e in _list(events.person["emailAddress"]))
    assert all(re.fullmatch(r"\d{4} \d{4} \d{4} \d{4}", c) for c in _list(events.person["creditCard"]))
    assert {len(s) for s in _list(events.auction["itemName"])} <= set(range(20))
    sizes = np.array([len(x) for x in _list(events.bid["extra"])]) + 32
    assert 95 < sizes.mean() < 105 and sizes.min() >= 32 + 54 and sizes.max() <= 32 + 82  # 100 bytes on average
    channels = _list(events.bid["channel"])
    assert 0.45 < np.mean([c in ("Google", "Facebook", "Baidu", "Apple") for c in channels]) < 0.55
    urls = dict(zip(channels, _list(events.bid["url"]), strict=True))
    assert all(u.startswith("https://www.nexmark.com/") for u in urls.values())
    assert len({urls[c] for c in ("Google", "Facebook", "Baidu", "Apple") if c in urls}) == 4


def test_options_are_checked_as_nexmarks():
    source = _source(**{"events.num": "10", "stop-at": "4", "first-event.rate": "5", "next-event.rate": "7",
                        "rate.shape": "SINE", "rate.period": "1 min", "person.avg-size": "1kb"})
    assert source.row_count == 4 and source.config.first_event_rate == 5 and source.config.avg_person_bytes == 1024
    assert _source(**{"events.num": "0"}).row_count is None  # unbounded (streaming)
    with pytest.raises(ConnectorError, match="(?s)Unsupported options.*events.number"):
        _source(**{"events.number": "10"})
    with pytest.raises(ConnectorError, match="unbounded table 'datagen' in batch mode"):
        _source(streaming=False)
    with pytest.raises(ConnectorError, match="keep-alive"):
        _source(**{"events.num": "10", "keep-alive": "true"})
    with pytest.raises(ConnectorError, match="first-event.rate"):
        _source(**{"first-event.rate": "0"})
    table, _ = parse_create_table("CREATE TABLE t (event_type INT, bid ROW<auction BIGINT>) WITH "
                                  "('connector' = 'nexmark', 'events.num' = '1')")
    with pytest.raises(ConnectorError, match="column 'bid' must be ROW<auction, bidder"):
        NexmarkSource(table, True)


def test_arrow_columns_null_the_other_kinds():
    source = _source(**{"events.num": "100", "base-time": "0"})
    kinds, person, auction, bid = (a.to_pylist() for a in source.arrow_columns(0, 100))
    assert all((p is not None) == (k == 0) and (a is not None) == (k == 1) and (b is not None) == (k == 2)
               for k, p, a, b in zip(kinds, person, auction, bid, strict=True))
    first_bid = bid[kinds.index(2)]
    assert list(first_bid) == ["auction", "bidder", "price", "channel", "url", "dateTime", "extra"]
    assert first_bid["dateTime"].isoformat() == "1970-01-01T00:00:00"  # event 2: (2 + 1) * 100 µs, in ms


def test_a_zero_proportion_divides_as_java():
    events = _generator(person_proportion=0).events(0, 1000)
    assert (events.event_type != 0).all()
    # lastBase0PersonId is -1 without persons: Java's -1 / 100 * 100 is 0, so hot sellers are 1000.
    assert set(events.auction["seller"][events.auction["seller"] % 100 == 0].tolist()) == {1000}


def test_the_stream_reader_of_an_unbounded_source_never_ends():
    pytest.importorskip("pyspark")
    from pyspark.sql.streaming.datasource import ReadMaxRows

    from changeflow.runtime.spark.connectors.datagen_source import _Reader

    source = _source(**{"base-time": "0"})
    physical = tuple((c.name, c.data_type) for c in source.table.schema.physical_columns())
    reader = _Reader(source, physical, rows_per_batch=1000, end_of_input=False, partitions_per_batch=2)
    assert reader.latestOffset({"row": 10**12}, ReadMaxRows(1000)) == {"row": 10**12 + 1000}
    [partition] = reader.partitions({"row": 5}, {"row": 25})
    [batch] = list(reader.read(partition))
    assert batch.column("_seq").to_pylist() == list(range(5, 25))
    assert batch.column("event_type").to_pylist() == source.generator.events(5, 20).event_type.tolist()
