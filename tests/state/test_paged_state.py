"""PagedKeyedState keeps exactly the rows stored per key, whatever the page layout."""

from __future__ import annotations

import pandas as pd
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
    values = loaded["v"] if "v" in loaded else []  # nothing stored: a key-only empty frame
    for k, v in zip(loaded["k"], values):
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
