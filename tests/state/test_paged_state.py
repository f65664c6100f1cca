"""PagedKeyedState keeps exactly the rows stored per key, whatever the page layout."""

from __future__ import annotations

import pickle

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from changeflow.state.paged import DictPageStore, PagedKeyedState

keys = st.one_of(st.none(), st.integers(0, 30))
# A batch of operations: store rows for some keys (0-2 rows each), then commit.
batches = st.lists(st.dictionaries(keys, st.lists(st.integers(0, 99), max_size=2), min_size=1, max_size=8),
                   min_size=1, max_size=6)


def frame(pairs):
    return pd.DataFrame({"k": pd.array([k for k, _ in pairs], dtype="Int64"),
                         "v": pd.array([v for _, v in pairs], dtype="Int64")})


@settings(max_examples=60, deadline=None)
@given(batches, st.sampled_from([1, 3, 16]))
def test_paged_state_matches_a_dict_of_rows(ops, pages):
    store = DictPageStore()
    expected: dict = {}
    for op in ops:
        state = PagedKeyedState(store, ["k"], pages)
        ks = frame([(k, 0) for k in op])[["k"]]
        state.store("t", ks, frame([(k, v) for k, vs in op.items() for v in vs]))
        state.commit()
        for k, vs in op.items():
            expected[k] = sorted(vs)
    state = PagedKeyedState(store, ["k"], pages)
    everything = frame([(k, 0) for k in expected])[["k"]]
    loaded = state.load("t", everything)
    got: dict = {k: [] for k in expected}
    values = loaded.get("v", [])  # nothing stored: a key-only empty frame
    for k, v in zip(loaded["k"], values, strict=True):
        got[None if pd.isna(k) else int(k)].append(int(v))
    assert {k: sorted(v) for k, v in got.items()} == expected


def test_one_read_and_one_write_per_touched_page():
    store = DictPageStore()
    state = PagedKeyedState(store, ["k"], pages=4)
    ks = pd.DataFrame({"k": range(100)})
    state.store("a", ks, ks.assign(v=1))
    state.store("b", ks, ks.assign(w=2))
    state.commit()
    assert store.calls == 4 + 4  # four pages read once (empty), written once
    assert len(store.pages) == 4


def test_emptied_pages_are_removed():
    store = DictPageStore()
    ks = pd.DataFrame({"k": [1, 2]})
    state = PagedKeyedState(store, ["k"], pages=1)
    state.store("a", ks, ks.assign(v=1))
    state.commit()
    state = PagedKeyedState(store, ["k"], pages=1)
    state.store("a", ks, ks.iloc[:0].assign(v=1))
    state.commit()
    assert store.pages == {}


# --- tables keyed by the operator key plus an element column (the ordered multiset's layout) ---

def node_frame(pairs):
    return pd.DataFrame({"k": pd.array([k for k, _ in pairs], dtype="Int64"),
                         "n": pd.array([n for _, n in pairs], dtype="int64"),
                         "v": [f"{k}/{n}" for k, n in pairs]}, columns=["k", "n", "v"])


# A batch: per (k, n) element, store it (True) or delete it (False).
element_batches = st.lists(st.dictionaries(st.tuples(keys, st.integers(0, 40)), st.booleans(), min_size=1,
                                           max_size=12), min_size=1, max_size=8)


@settings(max_examples=60, deadline=None)
@given(element_batches, st.sampled_from([None, 1, 3]))
def test_rows_are_matched_on_every_key_column(ops, rows_per_page):
    store = DictPageStore()
    expected: set = set()
    for op in ops:
        state = PagedKeyedState(store, ["k"], 2, rows_per_page=rows_per_page)
        state.store("node", node_frame(list(op))[["k", "n"]], node_frame([e for e, keep in op.items() if keep]))
        state.commit()
        expected = (expected - set(op)) | {e for e, keep in op.items() if keep}
    state = PagedKeyedState(store, ["k"], 2, rows_per_page=rows_per_page)
    probe = node_frame(sorted({e for op in ops for e in op}, key=repr))[["k", "n"]]
    loaded = state.load("node", probe)
    got = {(None if pd.isna(k) else int(k), int(n)) for k, n in zip(loaded["k"], loaded["n"], strict=True)}
    assert got == expected
    if expected:
        rows = zip(loaded["k"], loaded["n"], loaded["v"], strict=True)
        assert all(v == f"{None if pd.isna(k) else k}/{n}" for k, n, v in rows)


def test_growing_pages_keep_one_element_read_bounded_by_the_page_size_not_the_history():
    store = DictPageStore()
    for start in range(0, 4000, 500):  # one key's history of 4000 elements, stored over 8 batches
        state = PagedKeyedState(store, ["k"], 4, rows_per_page=64)
        elements = node_frame([(1, n) for n in range(start, start + 500)])
        state.store("node", elements[["k", "n"]], elements)
        state.commit()
    pages = [pickle.loads(v[0]) for k, v in store.pages.items() if k != (-1,)]
    sizes = [len(p["node"]) for p in pages]
    assert sum(sizes) == 4000 and len(pages) >= 4000 // 64
    assert max(sizes) <= 4 * 64  # a hash's spread over pages, not the history's length
    state = PagedKeyedState(store, ["k"], 4, rows_per_page=64)
    store.calls = 0
    one = state.load("node", node_frame([(1, 1234)])[["k", "n"]])
    assert one["v"].tolist() == ["1/1234"] and store.calls == 2  # the directory and one page


def test_keys_must_extend_the_operator_key():
    state = PagedKeyedState(DictPageStore(), ["k"], 4)
    with pytest.raises(ValueError, match=r"do not start with the operator's key columns \['k'\]"):
        state.load("t", pd.DataFrame({"n": [1]}))


@settings(max_examples=40, deadline=None)
@given(batches, st.sampled_from([(1, None), (3, None), (1, 2), (2, 3)]))
def test_scan_returns_every_row_of_the_table_whatever_the_pages(ops, layout):
    pages, rows_per_page = layout
    store = DictPageStore()
    expected: dict = {}
    for op in ops:
        state = PagedKeyedState(store, ["k"], pages, rows_per_page)
        ks = frame([(k, 0) for k in op])[["k"]]
        state.store("t", ks, frame([(k, v) for k, vs in op.items() for v in vs]))
        state.store("u", ks, frame([(k, 1) for k in op]))  # another table on the same pages
        state.commit()
        for k, vs in op.items():
            expected[k] = vs
    scanned = PagedKeyedState(store, ["k"], pages, rows_per_page).scan("t")
    got = [((None if pd.isna(k) else int(k)), int(v))
           for k, v in zip(scanned.get("k", []), scanned.get("v", []), strict=True)]
    assert sorted(got, key=repr) == sorted(((k, v) for k, vs in expected.items() for v in vs), key=repr)


def test_scan_of_an_unknown_table_is_empty_and_reads_each_page_once():
    store = DictPageStore()
    state = PagedKeyedState(store, ["k"], 4)
    state.store("t", frame([(1, 0)])[["k"]], frame([(1, 5)]))
    state.commit()
    state = PagedKeyedState(store, ["k"], 4)
    store.calls = 0
    assert len(state.scan("nothing")) == 0
    assert store.calls == 4
    assert state.scan("t")["v"].tolist() == [5] and store.calls == 4  # pages are cached for the batch


def test_neighbouring_sequence_numbers_share_pages():
    # A multiset history grows at its tail and shrinks at its head: a batch's elements are
    # neighbours, so they should sit in a few pages however many pages the state has.
    store = DictPageStore()
    state = PagedKeyedState(store, ["k"], pages=1, rows_per_page=16)
    nodes = pd.DataFrame({"k": [1] * 4096, "_sqn": range(4096), "v": range(4096)})
    state.store("node", nodes[["k", "_sqn"]], nodes)
    state.commit()
    state = PagedKeyedState(store, ["k"], pages=1, rows_per_page=16)
    assert state.page_count >= 256
    store.calls = 0
    got = state.load("node", pd.DataFrame({"k": [1] * 64, "_sqn": range(1024, 1088)}))
    assert got["v"].tolist() == list(range(1024, 1088))
    assert store.calls <= 3, store.calls  # the directory and the one or two pages of the block


def test_state_written_before_sequence_blocks_keeps_hashing_each_number():
    # A directory without "sequence_block" (state of an earlier changeflow) must keep finding its
    # rows where that version put them: each sequence number hashed on its own.
    store = DictPageStore()
    old = pickle.dumps({"level": 2, "rows": 0, "keys": {}}, protocol=5)
    store.updateValue((-1,), (old,))
    state = PagedKeyedState(store, ["k"], pages=2, rows_per_page=1000)
    nodes = pd.DataFrame({"k": [1] * 300, "_sqn": range(300), "v": range(300)})
    state.store("node", nodes[["k", "_sqn"]], nodes)
    state.commit()
    count = PagedKeyedState(store, ["k"], pages=2, rows_per_page=1000).page_count
    for (page,), (blob,) in store.pages.items():
        if page == -1:
            continue
        rows = pickle.loads(blob)["node"]
        where = pd.util.hash_pandas_object(rows[["k", "_sqn"]], index=False).to_numpy() % count
        assert set(where.tolist()) == {page}


def test_a_store_keeps_timestamp_objects_as_objects_and_datetime64_as_datetime64():
    # Pages are concatenated column by column (concat_rows): no dtype inference on the way.
    store = DictPageStore()
    for dtype in (object, "datetime64[ns]"):
        stamps = pd.Series(pd.to_datetime(["2024-01-01", "2024-01-02", None, "2024-01-03"])).astype(dtype)
        rows = pd.DataFrame({"k": [1, 2, 3, 4], "t": stamps})
        state = PagedKeyedState(store, ["k"], pages=3)
        state.store(f"t{dtype}", rows[["k"]], rows)
        state.commit()
        state = PagedKeyedState(store, ["k"], pages=3)
        state.store(f"t{dtype}", rows[["k"]].iloc[:1], rows.iloc[:0])
        loaded = state.scan(f"t{dtype}").sort_values("k").reset_index(drop=True)
        assert loaded["t"].dtype == rows["t"].dtype
        assert loaded["k"].tolist() == [2, 3, 4]
        assert loaded["t"].isna().tolist() == [False, True, False]
        assert loaded["t"].dropna().tolist() == [pd.Timestamp("2024-01-02"), pd.Timestamp("2024-01-03")]


_key_values = st.one_of(st.none(), st.integers(-2, 2), st.sampled_from(["a", "b"]), st.just(float("nan")))


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(_key_values, st.integers(0, 2)), max_size=12),
       st.lists(st.tuples(_key_values, st.integers(0, 2)), max_size=6),
       st.sampled_from(["object", "int", "Int64", "float", "datetime"]))
def test_key_membership_by_factorized_codes_agrees_with_a_merge(rows, keys, kind):
    # The factorized path of _hits must find exactly the rows a merge on the key columns finds
    # (every kind of null equal to any other), for each dtype it takes.
    from changeflow.state import paged

    def frame(pairs):
        first = [a for a, _ in pairs]
        if kind == "int":
            first = [a if isinstance(a, int) else 7 for a in first]
        elif kind == "Int64":
            first = [a if isinstance(a, int) else None for a in first]
        elif kind == "float":
            first = [float(a) if isinstance(a, int) else float("nan") for a in first]
        elif kind == "datetime":
            first = [pd.Timestamp(a, unit="s") if isinstance(a, int) else pd.NaT for a in first]
        dtype = {"object": object, "int": "int64", "Int64": "Int64", "float": "float64",
                 "datetime": "datetime64[ns]"}[kind]
        return pd.DataFrame({"k": pd.Series(first, dtype=dtype), "n": pd.Series([b for _, b in pairs], dtype="int64")})

    left, right = frame(rows), frame(keys)
    codes = paged._joint_key_codes(left, right, ["k", "n"])
    assert codes is not None
    marker = right.drop_duplicates().assign(__hit=True)
    expected = left.merge(marker, on=["k", "n"], how="left", sort=False)["__hit"].notna().to_numpy()
    assert paged._hits(left, right, ["k", "n"]).tolist() == expected.tolist()


def test_key_membership_falls_back_to_a_merge_when_dtypes_differ():
    from changeflow.state import paged

    left = pd.DataFrame({"k": pd.Series([1, 2, 3], dtype="int64")})
    right = pd.DataFrame({"k": pd.Series([2.0, None], dtype="float64")})
    assert paged._joint_key_codes(left, right, ["k"]) is None
    assert paged._hits(left, right, ["k"]).tolist() == [False, True, False]
def _merge_hits(rows: pd.DataFrame, keys: pd.DataFrame, columns: list[str]):
    """What a row's key being among ``keys`` meant before keys were coded: a left merge's match."""
    marker = keys[columns].drop_duplicates().assign(__hit=True)
    return rows.merge(marker, on=columns, how="left", sort=False)["__hit"].notna().to_numpy()


_key_values = st.fixed_dictionaries({
    "ws": st.one_of(st.none(), st.integers(0, 4)), "k": st.one_of(st.none(), st.integers(-2, 5)),
    "s": st.sampled_from([None, "a", "b", "ä"]), "f": st.sampled_from([0.0, -0.0, 1.5, float("nan")])})


def _key_frame(values: list[dict]) -> pd.DataFrame:
    """Key columns as the runtime gives them: datetime64 with NaT, Int64 with NA, object with None, float."""
    ws = [None if v["ws"] is None else pd.Timestamp("2024-01-01") + pd.Timedelta(seconds=10 * v["ws"])
          for v in values]
    return pd.DataFrame({"ws": pd.Series(ws, dtype="datetime64[ns]"),
                         "k": pd.array([v["k"] for v in values], dtype="Int64"),
                         "s": pd.Series([v["s"] for v in values], dtype=object),
                         "f": pd.Series([v["f"] for v in values], dtype="float64")})


@settings(max_examples=150, deadline=None)
@given(st.lists(_key_values, max_size=25), st.lists(_key_values, max_size=25),
       st.sampled_from([["ws", "k"], ["s"], ["f"], ["ws", "k", "s", "f"]]))
def test_coded_key_matching_matches_what_a_merge_matched(rows, keys, columns):
    from changeflow.state.paged import _hits

    left, right = _key_frame(rows), _key_frame(keys)
    # NULLs match NULLs and -0.0 matches 0.0, as in the merge.
    assert _hits(left, right, columns).tolist() == _merge_hits(left, right, columns).tolist()
    # Key columns of other dtypes on the two sides still go through the merge's casting.
    assert _hits(left.astype({"k": "float64"}), right, ["k"]).tolist() == \
        _merge_hits(left.astype({"k": "float64"}), right, ["k"]).tolist()


@settings(max_examples=100, deadline=None)
@given(st.lists(_key_values, max_size=25), st.sampled_from([["ws", "k"], ["s"], ["k", "f", "s", "ws"]]),
       st.sampled_from([1, 4, 64]))
def test_pages_are_where_hash_pandas_object_put_them(rows, columns, pages):
    """Rows hash to the pages they hashed to before the hash skipped building a frame (checkpoints stay readable)."""
    from pandas.util import hash_pandas_object

    frame = _key_frame(rows)
    state = PagedKeyedState(DictPageStore(), columns[:1], pages)
    expected = (hash_pandas_object(frame[columns], index=False).to_numpy() % pages).astype("int64")
    assert state._page_of(frame, columns).tolist() == expected.tolist()
