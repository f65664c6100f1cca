"""Python values of Flink types: inferred, checked, and carried through the engine.

A value has three forms:

- the *Python* value a PyFlink program passes and gets back (PyFlink's conversions):
  ``int``, ``float``, ``str``, ``bool``, ``decimal.Decimal``, ``bytearray`` for BINARY /
  VARBINARY / BYTES (``bytes`` accepted too), ``datetime.date``, ``datetime.time`` for TIME,
  naive ``datetime.datetime`` for TIMESTAMP and TIMESTAMP_LTZ (an instant shown in the
  session time zone UTC; under another session zone a result's TIMESTAMP_LTZ is an aware
  ``datetime`` in that zone), ``list`` for ARRAY, ``dict`` for MAP and MULTISET
  (element -> count), a positional ``Row`` for ROW;
- the *engine* value (what an Arrow column of :func:`arrow_type` holds): a ROW is a dict of
  its fields, a MAP a list of ``(key, value)`` pairs, a TIME its microseconds of the day
  (Spark's TIME type cannot be stored in Parquet, which bounded sources are streamed from);
- the text Flink prints (:mod:`changeflow.table.type_text`).

>>> from changeflow.common.types import DataTypes as T
>>> t = T.ROW([T.FIELD("a", T.INT()), T.FIELD("m", T.MAP(T.STRING(), T.TIME()))])
>>> engine = to_engine((1, {"k": datetime.time(0, 0, 2)}), t)
>>> engine
{'a': 1, 'm': [('k', 2000000)]}
>>> to_python(engine, t)
<Row(1, {'k': datetime.time(0, 0, 2)})>
"""

from __future__ import annotations

import datetime
import decimal
from typing import Any

from changeflow.common.row import Row
from changeflow.common.types import DataType, DataTypes

__all__ = ["arrow_type", "fits", "infer_element_type", "to_engine", "to_python"]

_MICROS_PER_SECOND = 1_000_000


def arrow_type(t: DataType):
    """The Arrow type of a column of type ``t`` in the engine (sources, Parquet files, results)."""
    import pyarrow as pa

    simple = {"BOOLEAN": pa.bool_(), "TINYINT": pa.int8(), "SMALLINT": pa.int16(), "INT": pa.int32(),
              "BIGINT": pa.int64(), "FLOAT": pa.float32(), "DOUBLE": pa.float64(), "STRING": pa.string(),
              "VARCHAR": pa.string(), "CHAR": pa.string(), "DATE": pa.date32(), "TIMESTAMP": pa.timestamp("us"),
              "TIMESTAMP_LTZ": pa.timestamp("us", tz="UTC"), "BINARY": pa.binary(), "VARBINARY": pa.binary(),
              "BYTES": pa.binary(), "TIME": pa.int64(), "NULL": pa.null()}
    if t.root in simple:
        return simple[t.root]
    if t.root == "DECIMAL":
        return pa.decimal128(*t.params)
    if t.root == "ARRAY":
        return pa.list_(pa.field("element", arrow_type(t.element_type), t.element_type.nullable))
    if t.root == "MAP":
        return pa.map_(arrow_type(t.key_type), pa.field("value", arrow_type(t.value_type), t.value_type.nullable))
    if t.root == "MULTISET":
        return pa.map_(arrow_type(t.element_type), pa.field("value", pa.int32(), False))
    if t.root == "ROW":
        return pa.struct([pa.field(n, arrow_type(ft), ft.nullable) for n, ft in t.params])
    raise TypeError(f"type {t} is not supported by changeflow's engine")


def to_engine(value: Any, t: DataType) -> Any:
    """A Python value of type ``t`` as the engine holds it (see the module docstring)."""
    if value is None:
        return None
    root = t.root
    if root in ("BINARY", "VARBINARY", "BYTES"):
        return bytes(value)
    if root == "TIME":
        return ((value.hour * 60 + value.minute) * 60 + value.second) * _MICROS_PER_SECOND + value.microsecond
    if root == "TIMESTAMP_LTZ" and _aware(value):
        return value.astimezone(datetime.timezone.utc).replace(tzinfo=None)
    if root == "ARRAY":
        return [to_engine(v, t.element_type) for v in value]
    if root == "MAP":
        return [(to_engine(k, t.key_type), to_engine(v, t.value_type)) for k, v in dict(value).items()]
    if root == "MULTISET":
        counts = value if isinstance(value, dict) else _count(value)
        return [(to_engine(k, t.element_type), n) for k, n in counts.items()]
    if root == "ROW":
        fields = t.params
        if isinstance(value, dict):
            values = [value.get(n) for n, _ in fields]
        elif isinstance(value, Row) and value._fields is not None:
            named = value.as_dict()
            values = [named.get(n) for n, _ in fields]
        else:
            values = list(value)
        return {n: to_engine(v, ft) for (n, ft), v in zip(fields, values, strict=True)}
    return value


def _aware(value: Any) -> bool:
    """A datetime with a zone (a function, so type checkers do not narrow the caller's value)."""
    return isinstance(value, datetime.datetime) and value.tzinfo is not None


def _instance(value: Any, classes: tuple) -> bool:
    """``isinstance`` (a function, so type checkers do not narrow the caller's value)."""
    return isinstance(value, classes)


def _count(values) -> dict:
    counts: dict = {}
    for v in values:
        counts[v] = counts.get(v, 0) + 1
    return counts


def to_python(value: Any, t: DataType) -> Any:
    """An engine value (as Arrow's ``to_pylist`` gives it) as PyFlink's Python value."""
    if value is None:
        return None
    root = t.root
    if root == "FLOAT" and _instance(value, (float,)):
        # The float32's shortest digits, as PyFlink gives a FLOAT (0.1, not 0.10000000149011612).
        import numpy as np

        return float(str(np.float32(value)))
    if root == "TIME" and _instance(value, (int,)):
        seconds, micros = divmod(value, _MICROS_PER_SECOND)
        return datetime.time(seconds // 3600, seconds // 60 % 60, seconds % 60, micros)
    if root == "TIMESTAMP_LTZ" and _aware(value) and str(value.tzinfo) == "UTC":
        # The engine's UTC instant, naive as the session zone UTC shows it; an instant a runtime already
        # showed in a session zone other than UTC stays aware in it (runtime/zone_values.py).
        return value.astimezone(datetime.timezone.utc).replace(tzinfo=None)
    if root in ("BINARY", "VARBINARY", "BYTES"):
        return bytearray(value)  # as PyFlink collects binary strings
    if root == "ARRAY":
        return [to_python(v, t.element) if t.element is not None else v for v in value]
    if root == "MAP":
        pairs = value.items() if isinstance(value, dict) else value
        return {to_python(k, t.key_type): to_python(v, t.value_type) for k, v in pairs}
    if root == "MULTISET":
        pairs = value.items() if isinstance(value, dict) else value
        return {to_python(k, t.element) if t.element is not None else k: n for k, n in pairs}
    if root == "ROW":
        # PyFlink collects a nested ROW as a positional Row (no field names).
        values = [value.get(n) for n, _ in t.params] if isinstance(value, dict) else list(value)
        return Row(*[to_python(v, ft) for (_, ft), v in zip(t.params, values, strict=True)])
    return value


# --- from_elements: PyFlink's inference and verification -------------------------------


def infer_element_type(value: Any) -> DataType:
    """The type PyFlink's ``from_elements`` infers for a value (``_infer_type``).

    ``datetime.datetime`` is a TIMESTAMP_LTZ(6), ``bytearray`` a BYTES, a ``dict`` a MAP whose
    key type is NOT NULL, a ``list`` an ARRAY of its first element's type, a Row with field
    names a ROW. ``bytes`` is refused, as PyFlink refuses it (pass a ``bytearray``).
    """
    simple = {bool: DataTypes.BOOLEAN(), int: DataTypes.BIGINT(), float: DataTypes.DOUBLE(),
              str: DataTypes.STRING(), bytearray: DataTypes.BYTES(), decimal.Decimal: DataTypes.DECIMAL(38, 18),
              datetime.date: DataTypes.DATE(), datetime.datetime: DataTypes.TIMESTAMP_LTZ(6),
              datetime.time: DataTypes.TIME()}
    if value is None:
        return DataTypes.NULL()
    if type(value) in simple:
        return simple[type(value)]
    if isinstance(value, dict):
        for k, v in value.items():
            if k is not None and v is not None:
                return DataTypes.MAP(infer_element_type(k).not_null(), infer_element_type(v))
        return DataTypes.MAP(DataTypes.NULL(), DataTypes.NULL())
    if isinstance(value, list):
        first = next((v for v in value if v is not None), None)
        return DataTypes.ARRAY(infer_element_type(first))
    if isinstance(value, (Row, tuple)):
        return infer_row_type(value)
    raise TypeError(f"not supported type: {type(value)} (value {value!r})")


def infer_row_type(element: Any, names: list[str] | None = None) -> DataType:
    """The ROW type of one element: a Row or namedtuple (its field names), a tuple/list, a dict."""
    if isinstance(element, dict):
        items = sorted(element.items())
    elif getattr(element, "_fields", None) is not None:  # a named Row or a namedtuple
        items = list(zip(element._fields, tuple(element), strict=True))
    elif isinstance(element, (tuple, list, Row)):
        given = list(names or [])
        given += [f"_{i}" for i in range(len(given) + 1, len(element) + 1)]
        items = list(zip(given, element, strict=False))
    else:
        raise TypeError(f"Can not infer schema for type: {type(element)} (element {element!r})")
    return DataTypes.ROW([DataTypes.FIELD(n, infer_element_type(v)) for n, v in items])


def merge_types(a: DataType, b: DataType, name: str) -> DataType:
    """Two inferred types of one column merged as PyFlink's ``_merge_type`` does (NULL gives way)."""
    if a.root == "NULL":
        return b
    if b.root == "NULL":
        return a
    if a.root != b.root:
        raise TypeError(f"{name}: Can not merge type {a} and {b}")
    if a.root == "ROW":
        other = dict(b.params)
        fields = [(n, merge_types(t, other[n], f"{name}.{n}") if n in other else t) for n, t in a.params]
        fields += [(n, t) for n, t in b.params if n not in dict(a.params)]
        return DataTypes.ROW(fields)
    if a.root in ("ARRAY", "MULTISET"):
        return DataType(a.root, True, (), merge_types(a.element_type, b.element_type, f"element in {name}"))
    if a.root == "MAP":
        return DataTypes.MAP(merge_types(a.key_type, b.key_type, f"key of {name}"),
                             merge_types(a.value_type, b.value_type, f"value of {name}"))
    return a


def has_null_type(t: DataType) -> bool:
    if t.root == "NULL":
        return True
    if t.root == "ROW":
        return any(has_null_type(ft) for _, ft in t.params)
    if t.root == "MAP":
        return has_null_type(t.key_type) or has_null_type(t.value_type)
    if t.element is not None:
        return has_null_type(t.element)
    return False


_PYTHON_TYPES: dict[str, tuple] = {
    "BOOLEAN": (bool,), "TINYINT": (int,), "SMALLINT": (int,), "INT": (int,), "BIGINT": (int,),
    "FLOAT": (int, float), "DOUBLE": (int, float), "STRING": (str,), "VARCHAR": (str,), "CHAR": (str,),
    "DECIMAL": (decimal.Decimal, int), "DATE": (datetime.date,), "TIME": (datetime.time,),
    "TIMESTAMP": (datetime.datetime,), "TIMESTAMP_LTZ": (datetime.datetime,),
    "BINARY": (bytes, bytearray), "VARBINARY": (bytes, bytearray), "BYTES": (bytes, bytearray),
    "ARRAY": (list, tuple), "MAP": (dict,), "MULTISET": (dict, list, tuple), "ROW": (tuple, list, dict, Row),
}
_RANGES = {"TINYINT": 8, "SMALLINT": 16, "INT": 32, "BIGINT": 64}


def misfit(value: Any, t: DataType) -> str | None:
    """Why a Python value cannot be a value of type ``t`` (``None`` when it can; ``""`` when its class is wrong)."""
    if value is None:
        return None if t.nullable else "the type is NOT NULL"
    accepted = _PYTHON_TYPES.get(t.root)
    if accepted is None:
        return f"type {t} is not supported by changeflow's engine"
    if (_instance(value, (bool,)) and t.root != "BOOLEAN") or not _instance(value, accepted):
        return ""
    if t.root in _RANGES and not -(1 << (_RANGES[t.root] - 1)) <= value < (1 << (_RANGES[t.root] - 1)):
        return f"out of the range of {t.root}"
    if t.root in ("CHAR", "BINARY") and len(value) != t.params[0]:
        return f"length {len(value)}, {t} needs exactly {t.params[0]}"
    if t.root in ("VARCHAR", "VARBINARY") and len(value) > t.params[0]:
        return f"length {len(value)}, over the maximum of {t}"
    if t.root == "ARRAY":
        return next((_nested(v, t.element_type) for v in value if misfit(v, t.element_type) is not None), None)
    if t.root == "MAP":
        return next((_nested(x, xt) for k, v in value.items() for x, xt in ((k, t.key_type), (v, t.value_type))
                     if misfit(x, xt) is not None), None)
    if t.root == "ROW" and not isinstance(value, dict):
        if len(value) != len(t.params):
            return f"{len(value)} fields, {t} has {len(t.params)}"
        return next((_nested(v, ft) for v, (_, ft) in zip(value, t.params, strict=True)
                     if misfit(v, ft) is not None), None)
    return None


def _nested(value: Any, t: DataType) -> str:
    """A nested value's misfit, said with its type and value."""
    reason = misfit(value, t)
    return f"{t} cannot hold {value!r} ({type(value).__name__})" + (f": {reason}" if reason else "")


def fits(value: Any, t: DataType) -> bool:
    """Whether a Python value can be a value of type ``t``."""
    return misfit(value, t) is None
