"""The materializer's TTL sweep: keys that see no more records lose their expired elements."""

import pytest

from changeflow.kernels.materializer import STRATEGIES, SinkUpsertMaterializer
from changeflow.kernels.state import InMemoryKeyedState
from changeflow.state.paged import DictPageStore, PagedKeyedState
from changeflow.testing.harness import KernelHarness, format_changes, row_of_kind

COLS = ["id", "uk", "v"]


def rec(spec):
    kind, i, uk, v = spec.split()
    return row_of_kind(kind, int(i), uk, v)


class Clocked:
    """A materializer on a fake clock, fed through the harness (which keeps one InMemoryKeyedState)."""

    def __init__(self, strategy, with_uk, high=50, low=40, ttl=100):
        self.now = 0
        self.kernel = SinkUpsertMaterializer(["id"], COLS, upsert_key=["uk"] if with_uk else None,
                                             strategy=strategy, ttl_ms=ttl, threshold_high=high,
                                             threshold_low=low, clock=lambda: self.now)
        self.h = KernelHarness(self.kernel, COLS)

    def at(self, now, *specs):
        self.now = now
        return format_changes(self.h.process([rec(s) for s in specs]))

    def sweep(self, now):
        self.now = now
        return self.kernel.sweep(self.h.state)

    def rows(self):
        state = self.h.state
        return {t: state.row_count(t) for t in state.tables() if state.row_count(t)}


BOTH = pytest.mark.parametrize("with_uk", [False, True], ids=["no_upsert_key", "upsert_key"])


@BOTH
@pytest.mark.parametrize("strategy", STRATEGIES)
def test_an_idle_key_loses_its_expired_elements_and_state_rows(strategy, with_uk):
    m = Clocked(strategy, with_uk, high=3, low=1)
    m.at(0, "+I 1 a x", "+I 1 b y", "+I 2 a x")
    m.at(50, "+I 1 c z", "+I 1 d w")  # key 1 reaches 4 elements: ADAPTIVE keeps it in MAP
    assert m.rows()
    assert m.sweep(99) == 100  # nothing is old enough yet; the oldest expires at 0 + 100
    assert m.sweep(100) == 150  # a, b of key 1 and key 2's row expired; c, d (at 50) survive
    assert m.kernel.sweep(m.h.state, now=100) == 150  # a second sweep at the same time changes nothing
    assert m.sweep(150) is None  # everything expired
    assert m.rows() == {}


@BOTH
@pytest.mark.parametrize("strategy", STRATEGIES)
def test_younger_elements_survive_and_keep_their_order(strategy, with_uk):
    m = Clocked(strategy, with_uk, high=3, low=1)
    m.at(0, "+I 1 a x", "+I 1 b y")
    m.at(60, "+I 1 c z", "+I 1 d w")
    assert m.sweep(120) == 160
    # the surviving history is c, d: retracting d rolls back to c, retracting c empties the key
    assert m.at(130, "-D 1 d w", "-D 1 c z") == ["+U[1, c, z]", "-D[1, c, z]"]


@BOTH
@pytest.mark.parametrize("strategy", STRATEGIES)
def test_after_a_sweep_retracting_an_expired_row_emits_nothing_and_inserts_start_over(strategy, with_uk):
    m = Clocked(strategy, with_uk, high=3, low=1)
    m.at(0, "+I 1 a x", "+I 1 b y", "+I 1 c z")
    assert m.sweep(200) is None
    assert m.rows() == {}
    assert m.at(210, "-D 1 c z", "-U 1 a x") == []
    assert m.at(220, "+I 1 e v", "+U 1 f u") == ["+I[1, e, v]", "+U[1, f, u]"]


@pytest.mark.parametrize("with_uk", [False, True], ids=["no_upsert_key", "upsert_key"])
def test_adaptive_key_swept_below_low_goes_back_to_value(with_uk):
    m = Clocked("ADAPTIVE", with_uk, high=4, low=2)
    m.at(0, *[f"+I 1 r{i} x" for i in range(4)])  # 4 >= high: key 1 moves to MAP
    m.at(50, "+I 1 s0 y", "+I 1 s1 y")
    assert "value" not in m.rows() and m.rows()["map_node"] == 6
    assert m.sweep(100) == 150  # the four r rows expire; two left <= low: back to VALUE
    assert m.rows() == {"value": 1}
    assert m.h.state.load("value", m.h.state.scan("value")[["id"]])["history"][0][0][0] == (1, "s0", "y")
    assert m.at(110, "-D 1 s1 y") == ["+U[1, s0, y]"]


def test_a_sweep_reads_each_expired_element_once_and_no_surviving_history():
    """MAP: a key's cost is its meta row, head node and the expired elements, not its surviving history."""

    class Counting(InMemoryKeyedState):
        def __init__(self):
            super().__init__()
            self.loaded = 0

        def load(self, table, keys):
            frame = super().load(table, keys)
            self.loaded += len(frame)
            return frame

    state = Counting()
    m = SinkUpsertMaterializer(["id"], COLS, strategy="MAP", ttl_ms=100, clock=lambda: 0)
    h = KernelHarness(m, COLS, state=state)
    h.process([rec(f"+I 1 r{i} x") for i in range(3)])
    m.clock = lambda: 50
    h.process([rec(f"+I 1 s{i} x") for i in range(200)])
    state.loaded = 0
    assert m.sweep(state, now=100) == 150
    # 3 expired nodes + the surviving head, 3 index rows (the meta row comes from the scan)
    assert state.loaded == 7
    assert state.row_count("map_node") == 200


def test_no_ttl_no_sweep():
    m = SinkUpsertMaterializer(["id"], COLS, strategy="VALUE")
    assert m.sweep_interval_ms is None and m.sweep(InMemoryKeyedState(), now=10**12) is None
    assert SinkUpsertMaterializer(["id"], COLS, ttl_ms=5000).sweep_interval_ms == 5000


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_sweep_on_paged_state_across_batches(strategy):
    store = DictPageStore()
    now = [0]
    k = SinkUpsertMaterializer(["id"], COLS, strategy=strategy, ttl_ms=100, threshold_high=3, threshold_low=1,
                               clock=lambda: now[0])
    rows_per_page = 4 if strategy in ("MAP", "ADAPTIVE") else None

    def batch(*specs):
        state = PagedKeyedState(store, ["id"], 2, rows_per_page)
        h = KernelHarness(k, COLS, state=state)
        out = format_changes(h.process([rec(s) for s in specs]))
        state.commit()
        return out

    batch(*[f"+I {i} a x" for i in range(6)], "+I 0 b y", "+I 0 c y", "+I 0 d y")
    now[0] = 60
    batch("+I 7 a x")
    now[0] = 100
    state = PagedKeyedState(store, ["id"], 2, rows_per_page)
    assert k.sweep(state) == 160
    state.commit()
    remaining = PagedKeyedState(store, ["id"], 2, rows_per_page)
    tables = ["legacy"] if strategy == "LEGACY" else ["value"] if strategy == "VALUE" else \
        ["map_meta", "map_node", "map_index"] + (["value"] if strategy == "ADAPTIVE" else [])
    ids = set()
    for t in tables:
        ids |= set(remaining.scan(t).get("id", []))
    assert ids == {7}
    now[0] = 170
    assert batch("-D 0 d y", "+I 0 e z") == ["+I[0, e, z]"]
