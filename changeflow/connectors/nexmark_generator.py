"""Nexmark's event stream as a pure function of the event number (no Spark; numpy and Arrow, vectorised).

The rules are those of the nexmark project's generator (``NexmarkGenerator``,
``GeneratorConfig``, ``PersonGenerator``, ``AuctionGenerator``, ``BidGenerator``,
``PriceGenerator``, ``StringsGenerator``), for its Flink source with one
generator (parallelism 1): event number ``k`` (0-based: the events before it)
has event id ``k + 2`` (nexmark's first event id 1 plus its first event number
1 plus ``k``) and event time ``base_time + int((k + 1) * 1e6 / first_event_rate) // 1000``
milliseconds. The event id picks the kind (``id % total < person`` is a person,
then ``auction`` auctions, then bids) and the ids: a person's id, an auction's
id, the "hot" seller, bidder and auction (one id in 100, chosen with
probability ``1 - 1/ratio``), the range of a non-hot auction or person, an
auction's expiry horizon, a price's law (``round(10**(6u) * 100)``), the
strings' lengths and alphabets.

What nexmark draws from an unseeded ``SplittableRandom`` (whether a bid is hot,
a price, a category, names, e-mails, the ``extra`` padding, channels...) is
drawn here from numpy generators seeded by ``(SEED, block, kind)``, one per
:data:`BLOCK` events and kind, in a fixed order: the same event number always
gives the same event, however a range is cut, on any machine. The draws'
distributions are nexmark's; the values are not Java's (nexmark's own are not
reproducible from run to run). Nexmark's fixed tables drawn at class loading
(its 1 MiB reusable ``extra`` text, the 4 hot URLs and the 10,000 channel URLs)
are drawn once from a fixed seed.

>>> g = NexmarkGenerator(NexmarkConfig(base_time_ms=0))
>>> e = g.events(0, 50)
>>> e.event_type[:5].tolist(), int((e.event_type == 0).sum()), int((e.event_type == 1).sum())
([1, 1, 2, 2, 2], 1, 3)
>>> e.auction["id"][:2].tolist(), e.timestamp_ms[:3].tolist()
([1001, 1002], [0, 0, 0])
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pyarrow as pa

BLOCK = 8192  # events generated from one seeded generator per kind (event k is in block k // BLOCK)
SEED = 0x4E584D4B  # "NXMK", mixed with the block number and the kind

FIRST_PERSON_ID = 1000
FIRST_AUCTION_ID = 1000
FIRST_CATEGORY_ID = 10
PERSON_ID_LEAD = 10
AUCTION_ID_LEAD = 10
HOT_RATIO = 100  # one person/auction id in HOT_RATIO is a hot seller, bidder or auction
NUM_CATEGORIES = 5
NUM_ACTIVE_PEOPLE = 1000  # NexmarkConfiguration.numActivePeople (no source option sets it)
NUM_IN_FLIGHT_AUCTIONS = 100  # NexmarkConfiguration.numInFlightAuctions (idem)
MIN_STRING_LENGTH = 3
CHANNELS_NUMBER = 10_000

US_STATES = ["AZ", "CA", "ID", "OR", "WA", "WY"]
US_CITIES = ["Phoenix", "Los Angeles", "San Francisco", "Boise", "Portland", "Bend", "Redmond", "Seattle", "Kent",
             "Cheyenne"]
FIRST_NAMES = ["Peter", "Paul", "Luke", "John", "Saul", "Vicky", "Kate", "Julie", "Sarah", "Deiter", "Walter"]
LAST_NAMES = ["Shultz", "Abrams", "Spencer", "White", "Bartels", "Walton", "Smith", "Jones", "Noris"]
HOT_CHANNELS = ["Google", "Facebook", "Baidu", "Apple"]

PERSON, AUCTION, BID = 0, 1, 2  # nexmark's Event.Type values: the event_type column


@dataclass(frozen=True)
class NexmarkConfig:
    """The generator's settings: the nexmark source options that change events (defaults as nexmark's)."""

    base_time_ms: int
    first_event_rate: int = 10_000
    person_proportion: int = 1
    auction_proportion: int = 3
    bid_proportion: int = 46
    avg_person_bytes: int = 200
    avg_auction_bytes: int = 500
    avg_bid_bytes: int = 100
    hot_auction_ratio: int = 2
    hot_bidders_ratio: int = 4
    hot_sellers_ratio: int = 4

    @property
    def total_proportion(self) -> int:
        return self.person_proportion + self.auction_proportion + self.bid_proportion

    @property
    def inter_event_delay_us(self) -> float:
        return 1_000_000.0 / self.first_event_rate  # GeneratorConfig, one event generator

    def timestamp_ms(self, event_numbers: np.ndarray) -> np.ndarray:
        """``GeneratorConfig.timestampForEvent``: ``base + (long)(n * delay_us) / 1000`` (n is nexmark's
        1-based event number), in the same double arithmetic as Java."""
        product = event_numbers.astype(np.float64) * self.inter_event_delay_us
        return self.base_time_ms + product.astype(np.int64) // 1000


@dataclass
class Events:
    """Events ``[start, start + count)`` as columns: ``event_type`` for all, and per kind the positions
    (indexes into the range) of its events and one column per field of nexmark's ROW (numbers and
    epoch milliseconds as numpy arrays, strings as Arrow arrays)."""

    start: int
    event_type: np.ndarray
    timestamp_ms: np.ndarray
    positions: dict[int, np.ndarray] = field(default_factory=dict)
    person: dict[str, Any] = field(default_factory=dict)
    auction: dict[str, Any] = field(default_factory=dict)
    bid: dict[str, Any] = field(default_factory=dict)

    def sliced(self, begin: int, end: int) -> "Events":
        """The events at positions ``[begin, end)`` of this range."""
        out = Events(self.start + begin, self.event_type[begin:end], self.timestamp_ms[begin:end])
        for kind, columns in ((PERSON, self.person), (AUCTION, self.auction), (BID, self.bid)):
            pos = self.positions[kind]
            lo, hi = int(np.searchsorted(pos, begin)), int(np.searchsorted(pos, end))  # positions ascend
            out.positions[kind] = pos[lo:hi] - begin
            target = {PERSON: out.person, AUCTION: out.auction, BID: out.bid}[kind]
            for name, values in columns.items():
                target[name] = values[lo:hi]
        return out


# --- ids (nexmark's lastBase0PersonId / lastBase0AuctionId / nextBase0*Id) ----------------------------


def last_base0_person_id(c: NexmarkConfig, event_id: np.ndarray) -> np.ndarray:
    epoch, offset = event_id // c.total_proportion, event_id % c.total_proportion
    offset = np.minimum(offset, c.person_proportion - 1)
    return epoch * c.person_proportion + offset


def last_base0_auction_id(c: NexmarkConfig, event_id: np.ndarray) -> np.ndarray:
    epoch, offset = event_id // c.total_proportion, event_id % c.total_proportion
    person = offset < c.person_proportion
    bid = offset >= c.person_proportion + c.auction_proportion
    epoch = np.where(person, epoch - 1, epoch)
    offset = np.where(person | bid, c.auction_proportion - 1, offset - c.person_proportion)
    return epoch * c.auction_proportion + offset


def _next_base0_person_id(c: NexmarkConfig, event_id: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    people = last_base0_person_id(c, event_id) + 1
    active = np.minimum(people, NUM_ACTIVE_PEOPLE)
    return people - active + rng.integers(0, active + PERSON_ID_LEAD)


def _next_base0_auction_id(c: NexmarkConfig, event_id: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    last = last_base0_auction_id(c, event_id)
    low = np.maximum(last - NUM_IN_FLIGHT_AUCTIONS, 0)
    return low + rng.integers(0, last - low + 1 + AUCTION_ID_LEAD)


def _hot_id(base0: np.ndarray) -> np.ndarray:
    """``(id / HOT_RATIO) * HOT_RATIO`` with Java's division (toward zero: a -1 id, when a proportion is 0,
    gives 0, not -100)."""
    return np.where(base0 < 0, -((-base0) // HOT_RATIO), base0 // HOT_RATIO) * HOT_RATIO


def _hot(ratio: int, n: int, rng: np.random.Generator) -> np.ndarray:
    """``random.nextInt(ratio) > 0``: hot with probability ``1 - 1/ratio``."""
    return rng.integers(0, ratio, size=n) > 0


def _price(n: int, rng: np.random.Generator) -> np.ndarray:
    """``PriceGenerator.nextPrice``: ``Math.round(10^(6u) * 100)``."""
    return np.floor(np.power(10.0, rng.random(n) * 6.0) * 100.0 + 0.5).astype(np.int64)


# --- strings (StringsGenerator) -----------------------------------------------------------------------


def _strings(n: int, max_length: int, rng: np.random.Generator, special: str = " ") -> list[str]:
    """``nextString(maxLength, special)``: 3 to maxLength - 1 characters, each ``special`` with probability
    1/13, else a letter; trimmed (spaces at the ends dropped, as Java's trim)."""
    width = max_length - 1
    lengths = MIN_STRING_LENGTH + rng.integers(0, max_length - MIN_STRING_LENGTH, size=n)
    codes = (rng.integers(0, 26, size=(n, width)) + ord("a")).astype(np.uint8)
    codes[rng.integers(0, 13, size=(n, width)) == 0] = ord(special)
    rows = np.ascontiguousarray(codes).view(f"S{width}").ravel().astype(f"U{width}").tolist()
    trim = special == " "
    return [s[:k].strip(" ") if trim else s[:k] for s, k in zip(rows, lengths.tolist(), strict=True)]


@functools.cache
def _reusable_extra() -> str:
    """Nexmark's REUSABLE_EXTRA_STRING: 1 MiB of random letters that ``extra`` values are cut from."""
    rng = np.random.default_rng([SEED, 1 << 40])
    return (rng.integers(0, 26, size=1 << 20) + ord("a")).astype(np.uint8).tobytes().decode("ascii")


def _extras(current_size: np.ndarray, average: int, rng: np.random.Generator) -> pa.Array:
    """``nextExtra``: padding so that a record is ``average`` bytes on average (``""`` when it is already
    larger); ``round(0.2 * rest)`` either side of the rest, cut from the reusable text at a random offset.

    Built as one Arrow string array by a numpy gather: a Python slice per value cost a third of the
    generator's time."""
    n = len(current_size)
    rest = average - current_size
    delta = np.floor(rest * 0.2 + 0.5).astype(np.int64)
    draw = rng.integers(0, np.maximum(2 * delta, 1))
    sizes = np.where(current_size > average, 0, rest - delta + np.where(delta == 0, 0, draw))
    text = _reusable_extra()
    offsets = rng.integers(0, np.maximum(len(text) - sizes, 1), size=n)
    if (sizes >= len(text) // 2).any():  # longer than nexmark cuts from its reusable text: fresh letters
        return pa.array([text[o:o + k] if k < len(text) // 2
                         else (rng.integers(0, 26, size=k) + ord("a")).astype(np.uint8).tobytes().decode("ascii")
                         for k, o in zip(sizes.tolist(), offsets.tolist(), strict=True)], type=pa.string())
    ends = np.cumsum(sizes)
    gather = np.arange(int(ends[-1]) if n else 0) + np.repeat(offsets - (ends - sizes), sizes)
    data = _reusable_bytes()[gather]
    bounds = np.concatenate([[0], ends]).astype(np.int32)
    return pa.StringArray.from_buffers(n, pa.py_buffer(bounds), pa.py_buffer(data))


@functools.cache
def _reusable_bytes() -> np.ndarray:
    return np.frombuffer(_reusable_extra().encode("ascii"), dtype=np.uint8)


def _base_urls(n: int, rng: np.random.Generator) -> list[str]:
    """``getBaseUrl``: ``https://www.nexmark.com/<a>/<b>/<c>/item.htm?query=1``, each part ``nextString(5, '_')``."""
    parts = _strings(3 * n, 5, rng, "_")
    return [f"https://www.nexmark.com/{parts[i]}/{parts[i + 1]}/{parts[i + 2]}/item.htm?query=1"
            for i in range(0, 3 * n, 3)]


def _java_abs_reverse(i: int) -> int:
    """``Math.abs(Integer.reverse(i))`` with Java's 32-bit overflow (``abs(MIN_VALUE)`` is MIN_VALUE)."""
    r = int(f"{i & 0xFFFFFFFF:032b}"[::-1], 2)
    r = r - (1 << 32) if r >= 1 << 31 else r
    return r if r == -(1 << 31) else abs(r)


@functools.cache
def _channel_urls() -> tuple[list[str], list[str], list[str]]:
    """The hot channels' URLs, and the 10,000 other channels with their URLs (9 in 10 with a channel_id)."""
    rng = np.random.default_rng([SEED, 1 << 41])
    hot = _base_urls(len(HOT_CHANNELS), rng)
    bases = _base_urls(CHANNELS_NUMBER, rng)
    with_id = (rng.integers(0, 10, size=CHANNELS_NUMBER) > 0).tolist()
    urls = [f"{url}&channel_id={_java_abs_reverse(i)}" if tagged else url
            for i, (url, tagged) in enumerate(zip(bases, with_id, strict=True))]
    names = [f"channel-{i}" for i in range(CHANNELS_NUMBER)]
    return hot, names, urls


@functools.cache
def _channel_tables() -> tuple[pa.Array, pa.Array]:
    hot_urls, names, urls = _channel_urls()
    return pa.array(HOT_CHANNELS + names, type=pa.string()), pa.array(hot_urls + urls, type=pa.string())


def _pick(values: list[str], indexes: np.ndarray) -> list[str]:
    return [values[i] for i in indexes.tolist()]


def _arrow(values: list[str]) -> pa.Array:
    return pa.array(values, type=pa.string())


def _lengths(values: list[str]) -> np.ndarray:
    return np.fromiter((len(v) for v in values), dtype=np.int64, count=len(values))


# --- the three kinds ----------------------------------------------------------------------------------


def _persons(c: NexmarkConfig, event_id: np.ndarray, ts: np.ndarray, rng: np.random.Generator) -> dict:
    n = len(event_id)
    names = [f"{a} {b}" for a, b in zip(_pick(FIRST_NAMES, rng.integers(0, len(FIRST_NAMES), n)),
                                        _pick(LAST_NAMES, rng.integers(0, len(LAST_NAMES), n)), strict=True)]
    emails = [f"{a}@{b}.com" for a, b in zip(_strings(n, 7, rng), _strings(n, 5, rng), strict=True)]
    digits = rng.integers(0, 10_000, size=(n, 4)).tolist()
    cards = [f"{a:04d} {b:04d} {c_:04d} {d:04d}" for a, b, c_, d in digits]
    cities = _pick(US_CITIES, rng.integers(0, len(US_CITIES), n))
    states = _pick(US_STATES, rng.integers(0, len(US_STATES), n))
    size = 8 + _lengths(names) + _lengths(emails) + _lengths(cards) + _lengths(cities) + _lengths(states)
    return {"id": last_base0_person_id(c, event_id) + FIRST_PERSON_ID, "name": _arrow(names),
            "emailAddress": _arrow(emails), "creditCard": _arrow(cards), "city": _arrow(cities),
            "state": _arrow(states), "dateTime": ts,
            "extra": _extras(size, c.avg_person_bytes, rng)}


def _auctions(c: NexmarkConfig, event_id: np.ndarray, event_number: np.ndarray, ts: np.ndarray,
              rng: np.random.Generator) -> dict:
    n = len(event_id)
    hot = _hot(c.hot_sellers_ratio, n, rng)
    hot_seller = _hot_id(last_base0_person_id(c, event_id))
    seller = np.where(hot, hot_seller, _next_base0_person_id(c, event_id, rng)) + FIRST_PERSON_ID
    category = FIRST_CATEGORY_ID + rng.integers(0, NUM_CATEGORIES, size=n)
    initial_bid = _price(n, rng)
    # nextAuctionLengthMs: up to twice the time until NUM_IN_FLIGHT_AUCTIONS more auctions have started.
    events_for_auctions = (NUM_IN_FLIGHT_AUCTIONS * c.total_proportion) // max(c.auction_proportion, 1)
    horizon = c.timestamp_ms(event_number + events_for_auctions) - ts
    expires = ts + 1 + rng.integers(0, np.maximum(horizon * 2, 1))
    names, descriptions = _strings(n, 20, rng), _strings(n, 100, rng)
    reserve = initial_bid + _price(n, rng)
    size = 8 + _lengths(names) + _lengths(descriptions) + 40
    return {"id": last_base0_auction_id(c, event_id) + FIRST_AUCTION_ID, "itemName": _arrow(names),
            "description": _arrow(descriptions), "initialBid": initial_bid, "reserve": reserve, "dateTime": ts,
            "expires": expires, "seller": seller, "category": category,
            "extra": _extras(size, c.avg_auction_bytes, rng)}


def _bids(c: NexmarkConfig, event_id: np.ndarray, ts: np.ndarray, rng: np.random.Generator) -> dict:
    n = len(event_id)
    hot = _hot(c.hot_auction_ratio, n, rng)
    hot_auction = _hot_id(last_base0_auction_id(c, event_id))
    auction = np.where(hot, hot_auction, _next_base0_auction_id(c, event_id, rng)) + FIRST_AUCTION_ID
    hot = _hot(c.hot_bidders_ratio, n, rng)
    hot_bidder = _hot_id(last_base0_person_id(c, event_id)) + 1
    # FIRST_PERSON_ID is added twice, as nexmark's BidGenerator does: bidder ids are person ids + 1000.
    bidder = np.where(hot, hot_bidder, _next_base0_person_id(c, event_id, rng)) + 2 * FIRST_PERSON_ID
    price = _price(n, rng)
    hot = _hot(2, n, rng)
    hot_index = rng.integers(0, len(HOT_CHANNELS), size=n)
    other = rng.integers(0, CHANNELS_NUMBER, size=n)
    channel_table, url_table = _channel_tables()  # the hot channels first, then the 10,000 others
    index = pa.array(np.where(hot, hot_index, len(HOT_CHANNELS) + other))
    channels, urls = channel_table.take(index), url_table.take(index)
    extras = _extras(np.full(n, 32, dtype=np.int64), c.avg_bid_bytes, rng)
    return {"auction": auction, "bidder": bidder, "price": price, "channel": channels, "url": urls,
            "dateTime": ts, "extra": extras}


class NexmarkGenerator:
    """Events by event number: :meth:`events` for any range, the same values however ranges are cut."""

    def __init__(self, config: NexmarkConfig) -> None:
        self.config = config
        self._last_block: tuple[int, Events] | None = None  # consecutive ranges share a block: kept one

    def event_types(self, start: int, count: int) -> np.ndarray:
        """The kinds of events ``[start, start + count)`` (0 person, 1 auction, 2 bid)."""
        c = self.config
        rem = (np.arange(start, start + count, dtype=np.int64) + 2) % c.total_proportion
        return np.where(rem < c.person_proportion, PERSON,
                        np.where(rem < c.person_proportion + c.auction_proportion, AUCTION, BID)).astype(np.int32)

    def events(self, start: int, count: int) -> Events:
        """Events ``[start, start + count)``, generated block by block."""
        pieces = []
        end = start + count
        block = start // BLOCK
        while block * BLOCK < end or not pieces:
            first = block * BLOCK
            whole = self._block(block)
            pieces.append(whole.sliced(max(start, first) - first, min(end, first + BLOCK) - first))
            block += 1
        return pieces[0] if len(pieces) == 1 else _concat(pieces)

    def _block(self, block: int) -> Events:
        if self._last_block is not None and self._last_block[0] == block:
            return self._last_block[1]
        c = self.config
        first = block * BLOCK
        numbers = np.arange(first, first + BLOCK, dtype=np.int64)
        kinds = self.event_types(first, BLOCK)
        ts = c.timestamp_ms(numbers + 1)
        events = Events(first, kinds, ts)
        for kind in (PERSON, AUCTION, BID):
            pos = np.flatnonzero(kinds == kind)
            events.positions[kind] = pos
            rng = np.random.default_rng([SEED, block, kind])
            event_id, event_ts = numbers[pos] + 2, ts[pos]
            if kind == PERSON:
                events.person = _persons(c, event_id, event_ts, rng)
            elif kind == AUCTION:
                events.auction = _auctions(c, event_id, numbers[pos] + 1, event_ts, rng)
            else:
                events.bid = _bids(c, event_id, event_ts, rng)
        self._last_block = (block, events)
        return events


def _concat(pieces: list[Events]) -> Events:
    out = Events(pieces[0].start, np.concatenate([p.event_type for p in pieces]),
                 np.concatenate([p.timestamp_ms for p in pieces]))
    offset = 0
    offsets = []
    for p in pieces:
        offsets.append(offset)
        offset += len(p.event_type)
    for kind, name in ((PERSON, "person"), (AUCTION, "auction"), (BID, "bid")):
        out.positions[kind] = np.concatenate([p.positions[kind] + o for p, o in zip(pieces, offsets, strict=True)])
        columns = getattr(out, name)
        for column in getattr(pieces[0], name):
            parts = [getattr(p, name)[column] for p in pieces]
            columns[column] = (np.concatenate(parts) if isinstance(parts[0], np.ndarray)
                               else pa.concat_arrays(parts))
    return out
