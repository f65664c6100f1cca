"""The ordered multiset: order, multiplicity, removal of the oldest occurrence, O(1) state per operation."""


from hypothesis import given, settings, strategies as st

from changeflow.kernels.multiset import OrderedMultiset, identity_of
from changeflow.kernels.state import InMemoryKeyedState

K = ("k",)


def ms_session(state):
    return OrderedMultiset("t", ["key"]).session(state)


def test_append_first_last_size_survive_flush():
    state = InMemoryKeyedState()
    s = ms_session(state)
    for v in ["a", "b", "c"]:
        s.append(K, identity_of((v,)), (v,), 7)
    s.flush()
    s = ms_session(state)
    assert (s.size(K), s.first(K), s.last(K)) == (3, (("a",), 7), (("c",), 7))


def test_remove_middle_last_and_all():
    state = InMemoryKeyedState()
    s = ms_session(state)
    for v in "abc":
        s.append(K, identity_of((v,)), (v,), 0)
    assert s.remove_value(K, identity_of(("b",))) == (True, False)
    assert s.remove_value(K, identity_of(("c",))) == (True, True)
    assert s.last(K) == (("a",), 0)
    assert s.remove_value(K, identity_of(("a",))) == (True, True)
    assert s.remove_value(K, identity_of(("a",))) == (False, False)
    s.flush()
    assert s.size(K) == 0 and s.first(K) is None
    assert state.row_count("t_node") == 0 and state.row_count("t_meta") == 0 and state.row_count("t_index") == 0


def test_duplicates_remove_oldest_occurrence():
    s = ms_session(InMemoryKeyedState())
    for v in "aba":
        s.append(K, identity_of((v,)), (v, len(s.items(K))), 0)
    s.remove_value(K, identity_of(("a",)))
    assert [r for r, _ in s.items(K)] == [("b", 1), ("a", 2)]


def test_expire_from_head():
    s = ms_session(InMemoryKeyedState())
    for ts, v in enumerate("abcd"):
        s.append(K, identity_of((v,)), (v,), ts)
    assert s.expire(K, 1) == 2
    assert [r for r, _ in s.items(K)] == [("c",), ("d",)]


def test_one_operation_touches_bounded_state_rows():
    """Removing from the middle of a 2000-element history loads and writes a constant number of rows."""
    state = InMemoryKeyedState()
    s = ms_session(state)
    for i in range(2000):
        s.append(K, identity_of((i,)), (i,), 0)
    s.flush()
    s = ms_session(state)
    s.prefetch([K], [(K, identity_of((1000,))), (K, identity_of((5000,)))])
    s.remove_value(K, identity_of((1000,)))
    s.append(K, identity_of((5000,)), (5000,), 0)
    assert s.lazy_loads == 0 and s.loads <= 4
    assert len(s._nodes) <= 8
    assert len(s._dirty_nodes) <= 5


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(st.booleans(), st.integers(0, 4)), max_size=40), st.integers(1, 5))
def test_matches_a_python_list_across_batches(ops, batch):
    state = InMemoryKeyedState()
    model = []
    for start in range(0, len(ops), batch):
        s = ms_session(state)
        chunk = ops[start:start + batch]
        s.prefetch([K], [(K, identity_of((v,))) for _, v in chunk])
        for add, v in chunk:
            if add:
                s.append(K, identity_of((v,)), (v,), 0)
                model.append(v)
            else:
                removed, was_last = s.remove_value(K, identity_of((v,)))
                assert removed == (v in model)
                if v in model:
                    i = model.index(v)
                    assert was_last == (i == len(model) - 1)
                    del model[i]
        s.flush()
    s = ms_session(state)
    assert [r[0] for r, _ in s.items(K)] == model
    assert s.size(K) == len(model)
