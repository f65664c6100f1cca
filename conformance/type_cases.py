"""Type conformance cases: values of every PyFlink ``DataTypes`` type through a query.

Shared by the Flink golden recorder (``record_flink_types.py``) and changeflow's tests.
Each case is ``build(t_env, E) -> Table`` where ``E`` has ``DataTypes``, ``Row``, ``col``
and ``lit`` from ``pyflink`` (recorder) or ``changeflow`` (tests); this module imports
neither. The recorder stores, per case, the resolved column types, the collected values
(encoded by :func:`encode`: each Python value tagged with its class, so ``bytes``,
``Decimal``, ``datetime.time``, ``Row`` and ``dict`` are compared exactly) and the text of
``execute().print()`` and ``print_schema()``.

Goldens live in ``conformance/goldens/types/``.
"""

from __future__ import annotations

import datetime
import decimal
from dataclasses import dataclass
from typing import Any, Callable, Dict

__all__ = ["TypeCase", "TYPE_CASES", "encode"]


@dataclass(frozen=True)
class TypeCase:
    name: str
    build: Callable  # build(t_env, E) -> Table
    mode: str = "batch"
    description: str = ""


TYPE_CASES: Dict[str, TypeCase] = {}


def case(name: str, *, mode: str = "batch"):
    def register(build: Callable) -> Callable:
        if name in TYPE_CASES:
            raise ValueError(f"duplicate type case {name!r}")
        TYPE_CASES[name] = TypeCase(name, build, mode, " ".join((build.__doc__ or "").split()))
        return build
    return register


def encode(v: Any) -> Any:
    """A collected value as JSON, tagged with its Python class (a Row also with its field names)."""
    if v is None or isinstance(v, (bool, int, str, float)):
        return v
    if isinstance(v, decimal.Decimal):
        return {"Decimal": str(v)}
    if isinstance(v, (bytes, bytearray)):
        return {type(v).__name__: v.hex()}
    if isinstance(v, datetime.datetime):
        return {"datetime": v.isoformat()}
    if isinstance(v, datetime.date):
        return {"date": v.isoformat()}
    if isinstance(v, datetime.time):
        return {"time": v.isoformat()}
    if isinstance(v, dict):
        return {"dict": [[encode(k), encode(x)] for k, x in v.items()]}
    if type(v).__name__ == "Row":
        fields = getattr(v, "_fields", None)  # PyFlink's positional Row has none, changeflow's has None
        names = list(fields) if fields is not None else None
        return {"Row": [encode(x) for x in v], "names": names}
    if isinstance(v, (list, tuple)):
        return {type(v).__name__: [encode(x) for x in v]}
    raise TypeError(f"cannot encode collected value {v!r} of type {type(v).__name__}")


def _scalars(E):
    T = E.DataTypes
    return T.ROW([
        T.FIELD("ti", T.TINYINT()), T.FIELD("si", T.SMALLINT()), T.FIELD("i", T.INT()),
        T.FIELD("bi", T.BIGINT()), T.FIELD("f", T.FLOAT()), T.FIELD("d", T.DOUBLE()),
        T.FIELD("dec", T.DECIMAL(10, 2)), T.FIELD("b", T.BOOLEAN()), T.FIELD("c", T.CHAR(3)),
        T.FIELD("vc", T.VARCHAR(10)), T.FIELD("s", T.STRING()),
    ])


_SCALAR_ROWS = [
    (1, 300, 70000, 10000000000, 1.5, 2.25, decimal.Decimal("3.10"), True, "abc", "hello", "world"),
    (-128, -1, 0, -5, 0.1, 1e10, decimal.Decimal("-0.50"), False, "xy ", "", "a b"),
    (None, None, None, None, None, None, None, None, None, None, None),
]


@case("numbers_and_strings")
def numbers_and_strings(t_env, E):
    """Every numeric, boolean and character type, with a row of nulls."""
    return t_env.from_elements(_SCALAR_ROWS, _scalars(E))


@case("numbers_and_strings_streaming", mode="streaming")
def numbers_and_strings_streaming(t_env, E):
    """The same in streaming mode (the tableau gets the op column)."""
    return t_env.from_elements(_SCALAR_ROWS, _scalars(E))


def _temporal(E):
    T = E.DataTypes
    return T.ROW([
        T.FIELD("dt", T.DATE()), T.FIELD("t0", T.TIME()), T.FIELD("ts3", T.TIMESTAMP(3)),
        T.FIELD("ts6", T.TIMESTAMP()), T.FIELD("ts0", T.TIMESTAMP(0)),
    ])


_TEMPORAL_ROWS = [
    (datetime.date(2024, 1, 2), datetime.time(3, 4, 5), datetime.datetime(2024, 1, 2, 3, 4, 5, 123000),
     datetime.datetime(2024, 1, 2, 3, 4, 5, 123000), datetime.datetime(2024, 1, 2, 3, 4, 5)),
    (datetime.date(1999, 12, 31), datetime.time(23, 0), datetime.datetime(2024, 1, 2),
     datetime.datetime(2024, 1, 2, 0, 0, 0, 500000), datetime.datetime(1970, 1, 1)),
    (None, None, None, None, None),
]


@case("dates_times_timestamps")
def dates_times_timestamps(t_env, E):
    """DATE, TIME(0) and TIMESTAMP(3/6/0). (PyFlink's from_elements keeps milliseconds only, so the
    inputs have none finer.)"""
    return t_env.from_elements(_TEMPORAL_ROWS, _temporal(E))


@case("dates_times_timestamps_streaming", mode="streaming")
def dates_times_timestamps_streaming(t_env, E):
    """The same in streaming mode."""
    return t_env.from_elements(_TEMPORAL_ROWS, _temporal(E))


def _binary(E):
    T = E.DataTypes
    return T.ROW([T.FIELD("id", T.INT()), T.FIELD("bin", T.BINARY(3)), T.FIELD("vb", T.VARBINARY(10)),
                  T.FIELD("by", T.BYTES())])


@case("binary_strings")
def binary_strings(t_env, E):
    """BINARY(3), VARBINARY(10) and BYTES values (bytearray in, bytes out)."""
    rows = [(1, bytearray(b"abc"), bytearray(b"\x00\xff"), bytearray(b"hello")), (2, None, None, None)]
    return t_env.from_elements(rows, _binary(E))


def _collections(E):
    T = E.DataTypes
    return T.ROW([
        T.FIELD("id", T.INT()), T.FIELD("arr", T.ARRAY(T.INT())), T.FIELD("names", T.ARRAY(T.STRING())),
        T.FIELD("m", T.MAP(T.STRING(), T.INT())),
        T.FIELD("r", T.ROW([T.FIELD("a", T.INT()), T.FIELD("b", T.STRING())])),
    ])


_COLLECTION_ROWS = [
    (1, [1, 2, 3], ["x", "y"], {"k": 1}, (7, "seven")),
    (2, [], [], {}, (None, None)),
    (3, None, None, None, None),
]


@case("arrays_maps_rows")
def arrays_maps_rows(t_env, E):
    """ARRAY<INT>, ARRAY<STRING>, MAP<STRING, INT> and a nested ROW, with empty and null values."""
    return t_env.from_elements(_COLLECTION_ROWS, _collections(E))


@case("arrays_maps_rows_streaming", mode="streaming")
def arrays_maps_rows_streaming(t_env, E):
    """The same in streaming mode."""
    return t_env.from_elements(_COLLECTION_ROWS, _collections(E))


@case("timestamp_ltz")
def timestamp_ltz(t_env, E):
    """TIMESTAMP_LTZ(3) and (6) in session time zone UTC (PyFlink 2.3 cannot collect them: print only;
    its from_elements keeps milliseconds only)."""
    T = E.DataTypes
    schema = T.ROW([T.FIELD("ltz3", T.TIMESTAMP_LTZ(3)), T.FIELD("ltz6", T.TIMESTAMP_LTZ())])
    rows = [(datetime.datetime(2024, 1, 2, 3, 4, 5, 120000), datetime.datetime(2024, 1, 2, 3, 4, 5, 123000)),
            (None, None)]
    return t_env.from_elements(rows, schema)


@case("null_elements_in_arrays")
def null_elements_in_arrays(t_env, E):
    """NULL elements of an ARRAY<STRING> and an ARRAY<INT> (PyFlink 2.3 cannot collect the first)."""
    T = E.DataTypes
    schema = T.ROW([T.FIELD("s", T.ARRAY(T.STRING())), T.FIELD("i", T.ARRAY(T.INT()))])
    return t_env.from_elements([(["a", None], [1, None])], schema)


@case("collections_collectable")
def collections_collectable(t_env, E):
    """ARRAY, MAP and ROW values that PyFlink 2.3 can collect (no empty, NULL or nested NULL values)."""
    T = E.DataTypes
    schema = T.ROW([T.FIELD("arr", T.ARRAY(T.INT())), T.FIELD("m", T.MAP(T.STRING(), T.INT())),
                    T.FIELD("r", T.ROW([T.FIELD("a", T.INT()), T.FIELD("b", T.STRING())]))])
    return t_env.from_elements([([1, 2], {"k": 1}, (7, "s")), ([3], {"j": 2}, (8, "t"))], schema)


@case("nested_collections")
def nested_collections(t_env, E):
    """An ARRAY of ROWs, a MAP of ARRAYs, a ROW holding a MAP."""
    T = E.DataTypes
    schema = T.ROW([
        T.FIELD("people", T.ARRAY(T.ROW([T.FIELD("name", T.STRING()), T.FIELD("age", T.INT())]))),
        T.FIELD("tags", T.MAP(T.STRING(), T.ARRAY(T.BIGINT()))),
        T.FIELD("r", T.ROW([T.FIELD("m", T.MAP(T.INT(), T.STRING())), T.FIELD("d", T.DOUBLE())])),
    ])
    rows = [([("ann", 30), ("bob", None)], {"a": [1, 2]}, ({1: "one"}, 0.5))]
    return t_env.from_elements(rows, schema)


@case("inferred_types")
def inferred_types(t_env, E):
    """Column types inferred from Python values (names given): int, float, str, bool, Decimal,
    date, time, bytearray, list, dict."""
    rows = [(1, 1.5, "a", True, decimal.Decimal("1.25"), datetime.date(2024, 1, 2), datetime.time(1, 2, 3),
             bytearray(b"ab"), [1, 2], {"k": 2.5})]
    names = ["i", "f", "s", "b", "dec", "dt", "t", "by", "arr", "m"]
    return t_env.from_elements(rows, names)


@case("inferred_datetime")
def inferred_datetime(t_env, E):
    """A datetime is inferred as TIMESTAMP_LTZ(6), as PyFlink infers it (print only: see timestamp_ltz)."""
    return t_env.from_elements([(1, datetime.datetime(2024, 1, 2, 3, 4, 5))], ["id", "ts"])


@case("dict_elements_inferred")
def dict_elements_inferred(t_env, E):
    """Elements given as dicts: PyFlink sorts the keys into the columns."""
    return t_env.from_elements([{"b": "x", "a": 1}, {"b": "y", "a": 2}])


@case("typed_columns_through_a_query")
def typed_columns_through_a_query(t_env, E):
    """Filter and project over composite columns; the composite values pass through."""
    table = t_env.from_elements(_COLLECTION_ROWS, _collections(E))
    return table.where(E.col("id") < 3).select(E.col("id"), E.col("m"), E.col("r"), E.col("arr"))


@case("group_by_date_key")
def group_by_date_key(t_env, E):
    """A DATE and a STRING column as GROUP BY keys."""
    T = E.DataTypes
    rows = [(datetime.date(2024, 1, 1), "a", 1), (datetime.date(2024, 1, 1), "a", 2),
            (datetime.date(2024, 1, 2), "b", 3)]
    table = t_env.from_elements(rows, T.ROW([T.FIELD("day", T.DATE()), T.FIELD("k", T.STRING()),
                                              T.FIELD("v", T.INT())]))
    return table.group_by(E.col("day"), E.col("k")).select(E.col("day"), E.col("k"), E.col("v").sum.alias("s"))


@case("not_null_types")
def not_null_types(t_env, E):
    """NOT NULL types, spelled with ``nullable=False`` and ``.not_null()``."""
    T = E.DataTypes
    schema = T.ROW([T.FIELD("a", T.INT(False)), T.FIELD("b", T.STRING().not_null()),
                    T.FIELD("c", T.ARRAY(T.INT(False)))])
    return t_env.from_elements([(1, "x", [1])], schema)


@case("from_pandas_row_type")
def from_pandas_row_type(t_env, E):
    """``from_pandas`` with a ROW type: the DataFrame's values take the declared types."""
    import pandas as pd

    T = E.DataTypes
    pdf = pd.DataFrame({"a": [1, 2], "b": ["x", None], "c": [0.5, 1.5]})
    return t_env.from_pandas(pdf, T.ROW([T.FIELD("id", T.INT()), T.FIELD("name", T.STRING()),
                                         T.FIELD("score", T.DOUBLE())]))
