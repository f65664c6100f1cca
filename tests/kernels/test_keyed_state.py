"""InMemoryKeyedState: the reference implementation of the KeyedState contract."""

import pandas as pd

from changeflow.kernels.state import InMemoryKeyedState, KeyedState


def frame(**columns):
    return pd.DataFrame(columns)


def test_is_a_keyed_state():
    assert isinstance(InMemoryKeyedState(), KeyedState)


def test_load_of_unknown_table_is_empty():
    assert len(InMemoryKeyedState().load("acc", frame(k=[1, 2]))) == 0


def test_store_replaces_all_rows_of_the_stored_keys_only():
    state = InMemoryKeyedState()
    state.store("t", frame(k=[1, 2]), frame(k=[1, 1, 2], v=[10, 11, 20]))
    state.store("t", frame(k=[1]), frame(k=[1], v=[12]))
    loaded = state.load("t", frame(k=[1, 2])).sort_values(["k", "v"])
    assert loaded.values.tolist() == [[1, 12], [2, 20]]


def test_keys_without_rows_are_deleted():
    state = InMemoryKeyedState()
    state.store("t", frame(k=[1, 2]), frame(k=[1, 2], v=[10, 20]))
    state.store("t", frame(k=[1, 2]), frame(k=[2], v=[21]))
    assert state.load("t", frame(k=[1, 2])).values.tolist() == [[2, 21]]
    assert state.row_count("t") == 1


def test_a_null_key_is_an_ordinary_key():
    state = InMemoryKeyedState()
    keys = pd.DataFrame({"k": pd.array([None, 1], dtype="Int64"), "j": ["x", None]})
    rows = pd.DataFrame({"k": pd.array([None, 1], dtype="Int64"), "j": ["x", None], "v": [1, 2]})
    state.store("t", keys, rows)
    loaded = state.load("t", pd.DataFrame({"k": pd.array([None], dtype="Int64"), "j": ["x"]}))
    assert loaded["v"].tolist() == [1]
    assert loaded["k"].isna().all()


def test_dtypes_survive_a_round_trip():
    state = InMemoryKeyedState()
    rows = pd.DataFrame({
        "k": ["a"],
        "i": pd.array([None], dtype="Int64"),
        "f": [1.5],
        "o": pd.Series([{"x": 1}], dtype=object),
    })
    state.store("t", frame(k=["a"]), rows)
    loaded = state.load("t", frame(k=["a"]))
    assert dict(loaded.dtypes) == dict(rows.dtypes)
    assert loaded["o"][0] == {"x": 1}


def test_rejects_rows_of_keys_it_was_not_given():
    state = InMemoryKeyedState()
    try:
        state.store("t", frame(k=[1]), frame(k=[2], v=[1]))
    except ValueError as e:
        assert "not under one of the stored keys" in str(e)
    else:
        raise AssertionError("expected a ValueError")


def test_scan_returns_every_stored_row_of_a_table():
    state = InMemoryKeyedState()
    assert len(state.scan("t")) == 0
    keys = pd.DataFrame({"k": pd.array([None, 1, 2], dtype="Int64")})
    state.store("t", keys, pd.DataFrame({"k": pd.array([None, 1, 1, 2], dtype="Int64"), "v": [1, 2, 3, 4]}))
    state.store("other", keys[1:2], pd.DataFrame({"k": pd.array([1], dtype="Int64"), "w": ["x"]}))
    state.store("t", pd.DataFrame({"k": pd.array([2], dtype="Int64")}),
                pd.DataFrame({"k": pd.array([], dtype="Int64"), "v": pd.array([], dtype="int64")}))
    scanned = state.scan("t")
    assert list(scanned.columns) == ["k", "v"] and str(scanned["k"].dtype) == "Int64"
    assert sorted(scanned.astype(object).where(scanned.notna(), None).values.tolist(),
                  key=repr) == sorted([[None, 1], [1, 2], [1, 3]], key=repr)
    state.store("t", keys, pd.DataFrame({"k": pd.array([], dtype="Int64"), "v": pd.array([], dtype="int64")}))
    assert len(state.scan("t")) == 0
