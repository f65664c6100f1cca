"""KeyedStream.sum/min/max/min_by/max_by as PyFlink 2.3's reduce functions."""

import pytest

from changeflow.common import Row
from changeflow.datastream.accumulate import AccumulateReduce


def fold(kind, position, records):
    f = AccumulateReduce(kind, position)
    out, acc = [], None
    for r in records:
        acc = r if acc is None else f.reduce(acc, r)
        out.append(acc)
    return out


RECORDS = [("a", 5, "x"), ("a", 3, "y"), ("a", 3, "z"), ("a", 9, "w")]


@pytest.mark.parametrize("kind, expected", [
    ("sum", [("a", 5, "x"), ("a", 8, "x"), ("a", 11, "x"), ("a", 20, "x")]),
    # min/max replace only the field: the other fields stay the first record's.
    ("min", [("a", 5, "x"), ("a", 3, "x"), ("a", 3, "x"), ("a", 3, "x")]),
    ("max", [("a", 5, "x"), ("a", 5, "x"), ("a", 5, "x"), ("a", 9, "x")]),
    # min_by/max_by give the whole record; a tie keeps the earlier one.
    ("min_by", [("a", 5, "x"), ("a", 3, "y"), ("a", 3, "y"), ("a", 3, "y")]),
    ("max_by", [("a", 5, "x"), ("a", 5, "x"), ("a", 5, "x"), ("a", 9, "w")]),
])
def test_accumulations_on_tuples(kind, expected):
    assert fold(kind, 1, RECORDS) == expected


def test_field_name_on_named_rows_keeps_the_row():
    rows = [Row(k="a", v=2), Row(k="a", v=1)]
    out = fold("min", "v", rows)
    assert out == [Row(k="a", v=2), Row(k="a", v=1)] and out[-1].v == 1 and out[-1]._fields == ("k", "v")


def test_basic_values_are_their_own_field_zero():
    assert fold("sum", 0, [1, 2, 3]) == [1, 3, 6]
    with pytest.raises(TypeError, match="field selected on a basic type"):
        fold("sum", 1, [1, 2])


def test_field_name_needs_a_named_row():
    with pytest.raises(KeyError, match="'v' is not a field of record"):
        fold("sum", "v", [("a", 1), ("a", 2)])


def test_bad_position_type():
    with pytest.raises(TypeError, match="must be of int or str type"):
        AccumulateReduce("sum", 1.5)


def test_accumulations_report_idempotent_output():
    assert AccumulateReduce("max_by", 0).is_output_idempotent()
