"""The ``nexmark`` connector: Nexmark's event stream, as the nexmark project's Flink source generates it.

Options are those of nexmark's ``NexmarkSourceOptions``; the table is nexmark's
``datagen`` table (``event_type INT`` and the ROWs ``person``, ``auction``,
``bid``; see :data:`NEXMARK_COLUMNS`). Event ``k`` (its ``_seq``) is a function
of ``k`` alone (:mod:`.nexmark_generator`), so Spark generates any range of
events anywhere: a partition (batch) or a micro-batch (streaming) at a time.
``events.num`` > 0 bounds the source (``stop-at`` >= 0 stops it earlier, as in
nexmark); 0 makes it unbounded (streaming only).

Options that change nothing in nexmark's generator either (``next-event.rate``,
``rate.shape``, ``rate.period``, ``rate.limited``: nexmark's generator keeps the
first rate) are checked and accepted. ``keep-alive`` = true and
``max-emit-speed`` = false (emitting at the events' wall-clock rate) are refused
by name. ``base-time`` (epoch milliseconds, not a nexmark option) fixes the event
time of the stream's start, which nexmark takes from the clock when the source
is created (the default here too), so that two runs give the same events.

>>> from changeflow.sql.ddl import parse_create_table
>>> table, _ = parse_create_table("CREATE TABLE datagen (event_type INT) WITH ('connector' = 'nexmark', "
...     "'events.num' = '100', 'base-time' = '0')")
>>> source = NexmarkSource(table, streaming=False)
>>> source.row_count, source.arrow_columns(0, 3)[0].to_pylist()
(100, [1, 1, 2])
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

import numpy as np

from changeflow.catalog import CatalogTable
from changeflow.config.memory_size import parse_memory_size
from changeflow.connectors.nexmark_generator import AUCTION, BID, PERSON, Events, NexmarkConfig, NexmarkGenerator
from changeflow.connectors.generated_rows import GeneratedRows
from changeflow.connectors.options import ConnectorError, boolean, check_keys, duration_ms, failure, integer

if TYPE_CHECKING:
    import pyarrow as pa

_OPTIONS = {"connector", "rate.shape", "rate.period", "rate.limited", "first-event.rate", "next-event.rate",
            "person.avg-size", "auction.avg-size", "bid.avg-size", "person.proportion", "auction.proportion",
            "bid.proportion", "bid.hot-ratio.auctions", "bid.hot-ratio.bidders", "auction.hot-ratio.sellers",
            "events.num", "keep-alive", "stop-at", "max-emit-speed", "base-time"}

# The ROW fields of nexmark's datagen table (ddl_gen.sql), in order; "ts" fields are TIMESTAMP(3).
NEXMARK_COLUMNS = {
    "person": (("id", "int"), ("name", "str"), ("emailAddress", "str"), ("creditCard", "str"), ("city", "str"),
               ("state", "str"), ("dateTime", "ts"), ("extra", "str")),
    "auction": (("id", "int"), ("itemName", "str"), ("description", "str"), ("initialBid", "int"),
                ("reserve", "int"), ("dateTime", "ts"), ("expires", "ts"), ("seller", "int"), ("category", "int"),
                ("extra", "str")),
    "bid": (("auction", "int"), ("bidder", "int"), ("price", "int"), ("channel", "str"), ("url", "str"),
            ("dateTime", "ts"), ("extra", "str")),
}
_KINDS = {"person": PERSON, "auction": AUCTION, "bid": BID}


def _positive(table: CatalogTable, key: str, default: int, allow_zero: bool = False) -> int:
    value = integer(table, False, key, default)
    if value < 0 or (value == 0 and not allow_zero):
        raise failure(table, False, f"'{key}' must be {'non-negative' if allow_zero else 'positive'}, got {value}")
    return value


def _bytes(table: CatalogTable, key: str, default: int) -> int:
    text = table.options.get(key)
    if text is None:
        return default
    try:
        return parse_memory_size(text)
    except ValueError as e:
        raise failure(table, False, f"Could not parse value '{text}' for key '{key}': {e}") from None


class NexmarkSource(GeneratedRows):
    """Nexmark's events; ``row_count`` is ``None`` for an unbounded source (``events.num`` = 0)."""

    connector = "nexmark"

    def __init__(self, table: CatalogTable, streaming: bool) -> None:
        check_keys(table, False, "nexmark", _OPTIONS)
        self.table = table
        shape = table.options.get("rate.shape", "SQUARE")
        if shape.upper() not in ("SQUARE", "SINE"):
            raise failure(table, False, f"Could not parse value '{shape}' for key 'rate.shape': expected SQUARE or "
                                        "SINE.")
        duration_ms(table, False, "rate.period")
        boolean(table, False, "rate.limited")
        _positive(table, "next-event.rate", 10_000)
        if boolean(table, False, "keep-alive"):
            raise failure(table, False, "'keep-alive' = 'true' is not supported: a bounded nexmark source ends "
                                        "when its events are generated")
        if not boolean(table, False, "max-emit-speed", True):
            raise failure(table, False, "'max-emit-speed' = 'false' is not supported: changeflow generates the "
                                        "events as fast as the query consumes them")
        person = _positive(table, "person.proportion", 1, allow_zero=True)
        auction = _positive(table, "auction.proportion", 3, allow_zero=True)
        bid = _positive(table, "bid.proportion", 46, allow_zero=True)
        if person + auction + bid == 0:
            raise failure(table, False, "the proportions of persons, auctions and bids must not all be 0")
        base_time = integer(table, False, "base-time")
        self.config = NexmarkConfig(
            base_time_ms=int(time.time() * 1000) if base_time is None else base_time,
            first_event_rate=_positive(table, "first-event.rate", 10_000), person_proportion=person,
            auction_proportion=auction, bid_proportion=bid,
            avg_person_bytes=_bytes(table, "person.avg-size", 200),
            avg_auction_bytes=_bytes(table, "auction.avg-size", 500),
            avg_bid_bytes=_bytes(table, "bid.avg-size", 100),
            hot_auction_ratio=_positive(table, "bid.hot-ratio.auctions", 2),
            hot_bidders_ratio=_positive(table, "bid.hot-ratio.bidders", 4),
            hot_sellers_ratio=_positive(table, "auction.hot-ratio.sellers", 4))
        events = integer(table, False, "events.num", 0)
        if events < 0:
            raise failure(table, False, f"'events.num' must not be negative, got {events}")
        stop_at = integer(table, False, "stop-at", -1)
        limits = [n for n in (events or None, stop_at if stop_at >= 0 else None) if n is not None]
        self.row_count = min(limits) if events > 0 and limits else None
        if self.row_count is None and not streaming:
            raise ConnectorError(f"Querying an unbounded table '{table.name}' in batch mode is not allowed. The table "
                                 "source is unbounded: set 'events.num' to bound it.")
        self.fields = [(c.name, c.data_type) for c in table.schema.physical_columns()]
        for name, data_type in self.fields:
            self._check_column(name, data_type)
        self.generator = NexmarkGenerator(self.config)

    def _check_column(self, name: str, data_type) -> None:
        if name == "event_type":
            if data_type.root not in ("INT", "BIGINT"):
                raise failure(self.table, False, f"column 'event_type' must be INT, got {data_type}")
            return
        if name not in NEXMARK_COLUMNS:
            raise failure(self.table, False, f"the nexmark source has no column '{name}'; its columns are "
                                             "event_type, person, auction and bid")
        want = [f for f, _ in NEXMARK_COLUMNS[name]]
        if data_type.root != "ROW" or [f for f, _ in data_type.params] != want:
            raise failure(self.table, False, f"column '{name}' must be ROW<{', '.join(want)}> as in nexmark's "
                                             f"DDL, got {data_type}")

    def arrow_columns(self, start: int, count: int) -> list[pa.Array]:
        """Events ``start .. start + count - 1`` as one Arrow array per column of the table."""
        import pyarrow as pa

        from changeflow.connectors.formats import arrow_type

        events = self.generator.events(start, count)
        out = []
        for name, data_type in self.fields:
            if name == "event_type":
                out.append(pa.array(events.event_type, type=arrow_type(data_type)))
            else:
                out.append(_struct(events, name, arrow_type(data_type)))
        return out

    def rows(self) -> list[tuple]:
        """Every event of a bounded source as Python rows (ROWs as tuples; small sources, tests)."""
        import pyarrow as pa

        arrays = self.arrow_columns(0, self.total_rows)
        table = pa.Table.from_arrays(arrays, names=[n for n, _ in self.fields])
        columns = [[None if v is None else (tuple(v.values()) if isinstance(v, dict) else v) for v in c.to_pylist()]
                   for c in table.columns]
        return list(zip(*columns, strict=True))


def _struct(events: Events, name: str, struct_type: pa.DataType) -> pa.Array:
    """The ROW column ``name``: the kind's events at their positions, null elsewhere."""
    import pyarrow as pa

    kind = _KINDS[name]
    columns = {"person": events.person, "auction": events.auction, "bid": events.bid}[name]
    children = []
    for (field, role), arrow_field in zip(NEXMARK_COLUMNS[name], struct_type, strict=True):
        values = columns[field]
        if role == "ts":  # epoch milliseconds -> TIMESTAMP(3) (UTC wall-clock time, as nexmark's Instant)
            children.append(pa.array(np.asarray(values, dtype=np.int64) * 1000, type=pa.timestamp("us"))
                            .cast(arrow_field.type))
        elif isinstance(values, pa.Array):  # strings: built as Arrow by the generator
            children.append(values if values.type == arrow_field.type else values.cast(arrow_field.type))
        else:
            children.append(pa.array(values, type=arrow_field.type))
    compact = pa.StructArray.from_arrays(children, fields=list(struct_type))
    index = np.full(len(events.event_type), -1, dtype=np.int64)
    index[events.positions[kind]] = np.arange(len(events.positions[kind]))
    return compact.take(pa.array(index, mask=index < 0))
