"""Types: conversion and checking of records at sources and typed operator outputs."""

import pytest

from changeflow.common import Row, Types


def test_row_from_tuple_dict_and_row():
    t = Types.ROW_NAMED(["k", "v"], [Types.STRING(), Types.LONG()])
    assert t.from_value(("a", 1)) == Row(k="a", v=1)
    assert t.from_value({"v": 2, "k": "b"}).as_dict() == {"k": "b", "v": 2}
    assert Types.ROW([Types.INT()]).from_value([1])._fields == ("f0",)


def test_errors_name_value_and_type():
    with pytest.raises(ValueError, match=r"value 'x' does not fit Types.INT\(\): expected an int, got str"):
        Types.TUPLE([Types.INT()]).from_value(["x"])
    with pytest.raises(ValueError, match="2 fields for 1 field types"):
        Types.TUPLE([Types.INT()]).from_value((1, 2))
    with pytest.raises(ValueError, match="cannot hold null"):
        Types.PRIMITIVE_ARRAY(Types.INT()).from_value([1, None])


def test_floats_and_nulls():
    assert Types.DOUBLE().from_value(1) == 1.0 and isinstance(Types.DOUBLE().from_value(1), float)
    assert Types.STRING().from_value(None) is None
    with pytest.raises(ValueError):
        Types.DOUBLE().from_value(True)


def test_equality_and_repr():
    assert Types.TUPLE([Types.INT()]) == Types.TUPLE([Types.INT()]) != Types.TUPLE([Types.LONG()])
    assert repr(Types.BASIC_ARRAY(Types.STRING())) == "Types.BASIC_ARRAY(Types.STRING())"
