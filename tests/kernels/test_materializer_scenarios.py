"""Sink upsert materializer: the seed's scenarios per strategy x with/without upsert key, conflict modes, TTL."""

import pytest
from hypothesis import given, settings, strategies as st

from changeflow.kernels.materializer import STRATEGIES, SinkUpsertMaterializer
from changeflow.testing.harness import KernelHarness, format_changes, row_of_kind

from tests.kernels.materializer_reference import reference_changes, upsert_materialize

COLS = ["id", "uk", "v"]

# (name, input changes, expected output) for a sink with primary key id; the upsert key (when used) is uk.
SCENARIOS = [
    ("first_row_is_insert", ["+I 1 a x"], ["+I[1, a, x]"]),
    ("retract_last", ["+I 1 a x", "+I 1 b y", "-U 1 b y"], ["+I[1, a, x]", "+U[1, b, y]", "+U[1, a, x]"]),
    ("retract_middle", ["+I 1 a x", "+I 1 b y", "+I 1 c z", "-U 1 b y"],
     ["+I[1, a, x]", "+U[1, b, y]", "+U[1, c, z]"]),
    ("retract_all", ["+I 1 a x", "+I 1 b y", "-D 1 a x", "-D 1 b y"],
     ["+I[1, a, x]", "+U[1, b, y]", "-D[1, b, y]"]),
    ("reinsert_after_empty", ["+I 1 a x", "-D 1 a x", "+I 1 b y"], ["+I[1, a, x]", "-D[1, a, x]", "+I[1, b, y]"]),
    ("retract_unknown_row_emits_nothing", ["+I 1 a x", "-D 1 q q"], ["+I[1, a, x]"]),
    ("out_of_order_update", ["+U 1 a y", "+I 1 b z", "-U 1 a x"], ["+I[1, a, y]", "+U[1, b, z]"]),
]

def parse(spec):
    kind, i, uk, v = spec.split()
    return row_of_kind(kind, int(i), uk, v)


def run(strategy, with_uk, specs, batch_size=None, **kw):
    k = SinkUpsertMaterializer(["id"], COLS, upsert_key=["uk"] if with_uk else None, strategy=strategy,
                               threshold_high=2, threshold_low=1, **kw)
    h = KernelHarness(k, COLS)
    records = [parse(s) for s in specs]
    if batch_size is None:
        return format_changes(h.process_each(records))
    out = []
    for i in range(0, len(records), batch_size):
        out += h.process(records[i:i + batch_size])
    return format_changes(out)


@pytest.mark.parametrize("with_uk", [False, True], ids=["no_upsert_key", "upsert_key"])
@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize("name,specs,expected", SCENARIOS, ids=[s[0] for s in SCENARIOS])
def test_scenario(name, specs, expected, strategy, with_uk):
    assert run(strategy, with_uk, specs) == expected
    assert run(strategy, with_uk, specs, batch_size=len(specs)) == expected


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_upsert_in_place_with_upsert_key(strategy):
    specs = ["+I 1 a x", "+I 1 b y", "+U 1 a z", "-D 1 b y"]
    # a/z replaced a/x at the head, so retracting b (the latest) rolls back to a/z.
    assert run(strategy, True, specs) == ["+I[1, a, x]", "+U[1, b, y]", "+U[1, a, z]", "+U[1, a, z]"]
    # Without an upsert key a/z is appended after b; retracting b (a middle row now) emits nothing.
    assert run(strategy, False, specs) == ["+I[1, a, x]", "+U[1, b, y]", "+U[1, a, z]"]


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_retract_oldest_of_duplicates(strategy):
    # Flink's removeFirst drops the oldest equal row: history a, b, a -> b, a; nothing emitted.
    assert run(strategy, False, ["+I 1 a x", "+I 1 b y", "+I 1 a x", "-U 1 a x"]) == [
        "+I[1, a, x]", "+U[1, b, y]", "+U[1, a, x]"]


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_do_nothing_keeps_first_row(strategy):
    specs = ["+I 1 a x", "+I 1 b y", "+I 2 c z", "-D 1 a x"]
    assert run(strategy, False, specs, batch_size=3, conflict="NOTHING") == [
        "+I[1, a, x]", "+I[2, c, z]", "+U[1, b, y]"]


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_do_error_names_key_and_rows(strategy):
    with pytest.raises(ValueError, match=r"\{'id': 1\}.*\(1, 'a', 'x'\) and \(1, 'b', 'y'\)"):
        run(strategy, False, ["+I 1 a x", "+I 1 b y"], batch_size=2, conflict="ERROR")
    # An update retracted in the same batch is no conflict.
    assert run(strategy, False, ["+I 1 a x", "-U 1 a x", "+U 1 b y"], batch_size=3, conflict="ERROR") == [
        "+I[1, b, y]"]


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_ttl_expires_from_the_head(strategy):
    now = [0]
    k = SinkUpsertMaterializer(["id"], COLS, strategy=strategy, ttl_ms=100, threshold_high=2, threshold_low=1,
                               clock=lambda: now[0])
    h = KernelHarness(k, COLS)
    h.process([parse("+I 1 a x")])
    now[0] = 60
    h.process([parse("+I 1 b y")])
    now[0] = 130  # a (inserted at 0) has expired, b (at 60) has not
    out = format_changes(h.process([parse("-D 1 b y")]))
    assert out == ["-D[1, b, y]"]


def test_bad_options_are_named():
    with pytest.raises(ValueError, match="strategy 'FAST'"):
        SinkUpsertMaterializer(["id"], COLS, strategy="FAST")
    with pytest.raises(ValueError, match=r"\['nope'\]"):
        SinkUpsertMaterializer(["nope"], COLS)


change = st.tuples(st.sampled_from(["+I", "+U", "-U", "-D"]), st.sampled_from("ab"), st.sampled_from("xyz"))


@settings(max_examples=120, deadline=None)
@given(st.lists(change, max_size=60), st.booleans(), st.integers(1, 7), st.sampled_from([(3, 1), (50, 40), (4, 2)]))
def test_every_strategy_matches_reference(changes, with_uk, batch, thresholds):
    """Random interleavings for one primary key: output equals the reference model, for each strategy."""
    records = [(kind, (1, uk, v)) for kind, uk, v in changes]
    expected = reference_changes(records, [0], [1] if with_uk else None)
    for strategy in STRATEGIES:
        k = SinkUpsertMaterializer(["id"], COLS, upsert_key=["uk"] if with_uk else None, strategy=strategy,
                                   threshold_high=thresholds[0], threshold_low=thresholds[1])
        h = KernelHarness(k, COLS)
        rows = [row_of_kind(kind, *vals) for kind, vals in records]
        out = []
        for i in range(0, len(rows), batch):
            out += h.process(rows[i:i + batch])
        got = [(str(r.get_row_kind()), tuple(r)) for r in out]
        assert got == expected, strategy
        assert upsert_materialize(got, [0]) == upsert_materialize(expected, [0])


def test_adaptive_crosses_both_thresholds_without_changing_output():
    # Grow one key's history past high (VALUE -> MAP), shrink below low (MAP -> VALUE), grow again.
    specs = [f"+I 1 r{i} x" for i in range(12)] + [f"-D 1 r{i} x" for i in range(0, 10, 2)] + \
            [f"-U 1 r{i} x" for i in (11, 9, 7)] + [f"+I 1 s{i} y" for i in range(8)] + \
            [f"-D 1 r{i} x" for i in (1, 3, 5)]
    records = [parse(s) for s in specs]
    ref = reference_changes([(str(r.get_row_kind()), tuple(r)) for r in records], [0])
    for batch in (1, 5):
        k = SinkUpsertMaterializer(["id"], COLS, strategy="ADAPTIVE", threshold_high=6, threshold_low=3)
        h = KernelHarness(k, COLS)
        out, modes = [], set()
        for i in range(0, len(records), batch):
            out += h.process(records[i:i + batch])
            modes.add("map" if h.state.row_count("map_meta") else "value")
        assert [(str(r.get_row_kind()), tuple(r)) for r in out] == ref
        assert modes == {"map", "value"}


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["+I", "-D"]), st.sampled_from([1, 2, None]), st.sampled_from("ab")),
                max_size=40), st.integers(1, 9))
def test_several_primary_keys_in_one_batch(changes, batch):
    """Keys (a null key included) keep separate histories; every strategy matches the reference."""
    records = [(kind, (pk, "u", v)) for kind, pk, v in changes]
    expected = reference_changes(records, [0])
    for strategy in STRATEGIES:
        k = SinkUpsertMaterializer(["id"], COLS, strategy=strategy, threshold_high=3, threshold_low=1)
        h = KernelHarness(k, COLS, dtypes={"id": "Int64"})
        rows = [row_of_kind(kind, *vals) for kind, vals in records]
        out = []
        for i in range(0, len(rows), batch):
            out += h.process(rows[i:i + batch])
        assert [(str(r.get_row_kind()), tuple(r)) for r in out] == expected, strategy
