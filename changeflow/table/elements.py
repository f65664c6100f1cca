"""The sources of ``from_elements``, ``from_pandas`` and ``from_spark``, with their schemas checked.

One numbering for all three, so every such source has its own name in a plan.
"""

from __future__ import annotations

import itertools
from typing import Any, Iterable

import pandas as pd

from changeflow.common.type_values import has_null_type, infer_row_type, merge_types, misfit, to_engine
from changeflow.common.types import DataType, DataTypes, infer_type
from changeflow.plan.nodes import Source
from changeflow.plan.type_inference import PlanError

__all__ = ["elements_source", "pandas_source", "spark_source"]

_ids = itertools.count()


def elements_source(elements: Iterable, schema: Any = None, verify_schema: bool = True) -> Source:
    """The source of ``from_elements``, as PyFlink reads its arguments.

    ``elements`` is any iterable (a list, a generator, a ``map`` object) of tuples, lists,
    Rows or dicts. ``schema`` is a ROW type, a list of column names, or ``None`` (types
    and names inferred as PyFlink infers them: a named Row's or a dict's field names, else
    ``_1, _2, ...``); a non-ROW type makes one column ``value`` holding each element.
    """
    elements = list(elements)
    if isinstance(schema, DataType) and schema.root != "ROW":
        schema = DataTypes.ROW([DataTypes.FIELD("value", schema)])
        elements = [(e,) for e in elements]
    if schema is None or (isinstance(schema, (list, tuple)) and not isinstance(schema, DataType)):
        row_type = _inferred_row_type(elements, list(schema) if schema is not None else None)
    elif isinstance(schema, DataType):
        row_type = schema
    else:
        raise TypeError(f"schema should be RowType, list, tuple or None, but got: {schema!r}")
    names, types = row_type.field_names(), row_type.field_types()
    rows = []
    for i, element in enumerate(elements):
        values = _values(element, names)
        if len(values) != len(names):
            raise PlanError(f"element {i} {element!r} has {len(values)} fields, the schema has "
                            f"{len(names)}: {names}")
        for name, t, value in zip(names, types, values, strict=True):
            problem = misfit(value, t) if verify_schema else None
            if problem is not None:
                raise PlanError(f"element {i} {element!r}: column {name!r} of type {t} cannot hold {value!r} "
                                f"({type(value).__name__})" + (f": {problem}" if problem else ""))
        rows.append(tuple(to_engine(v, t) for v, t in zip(values, types, strict=True)))
    return Source(f"elements_{next(_ids)}", tuple(zip(names, types, strict=True)), "elements", rows)


def _inferred_row_type(elements: list, names: list[str] | None) -> DataType:
    """PyFlink's ``_infer_schema_from_data``: every element's row type, merged."""
    if not elements:
        raise PlanError("can not infer schema from empty data set; pass a schema such as "
                        "DataTypes.ROW([DataTypes.FIELD(...)])")
    merged = infer_row_type(elements[0], names)
    for i, element in enumerate(elements[1:], start=1):
        row_type = infer_row_type(element, names)
        try:
            merged = merge_types(merged, row_type, "element")
        except TypeError:
            # PyFlink says "Can not merge type"; name the element, column and value instead.
            values = dict(zip(row_type.field_names(), _values(element, row_type.field_names()), strict=True))
            for name, t in merged.params:
                value = values.get(name)
                if value is not None and misfit(value, t) is not None:
                    raise PlanError(f"element {i} {element!r}: column {name!r} of type {t} cannot hold "
                                    f"{value!r} ({type(value).__name__})") from None
            raise
    unknown = [n for n, t in merged.params if has_null_type(t)]
    if unknown:
        raise PlanError(f"cannot infer the type of column {unknown[0]!r}: it holds only None (Some column types "
                        "cannot be determined after inferring); pass a schema such as "
                        "DataTypes.ROW([DataTypes.FIELD(...)])")
    return merged


def _values(element: Any, names: list[str]) -> tuple:
    """An element's values in column order: a dict or a named Row by name, else by position."""
    if isinstance(element, dict):
        return tuple(element.get(n) for n in names)
    fields = getattr(element, "_fields", None)
    if fields is not None and set(fields) == set(names):
        return tuple(getattr(element, n) for n in names)
    if isinstance(element, (tuple, list)):
        return tuple(element)
    raise PlanError(f"element {element!r} ({type(element).__name__}) is not a tuple, list, Row or dict")


def pandas_source(pdf: pd.DataFrame, schema: Any = None) -> Source:
    """The source of ``from_pandas``: a ROW type, column names, a list of types, or ``None``."""
    if schema is None:
        names = [str(c) for c in pdf.columns]
        types = [_pandas_type(column) for _, column in pdf.items()]
    elif isinstance(schema, DataType):
        if schema.root != "ROW":
            raise TypeError(f"schema {schema} is not a ROW type: pass DataTypes.ROW([...]), names or types")
        names, types = schema.field_names(), schema.field_types()
    elif isinstance(schema, (list, tuple)) and schema and all(isinstance(t, DataType) for t in schema):
        names, types = [str(c) for c in pdf.columns], list(schema)
    elif isinstance(schema, (list, tuple)) and all(isinstance(n, str) for n in schema):
        names, types = list(schema), [_pandas_type(column) for _, column in pdf.items()]
    else:
        raise TypeError("Unsupported schema type, it could only be of RowType, a list of str or a list of "
                        f"DataType, got {schema!r}")
    if len(names) != len(pdf.columns) or len(types) != len(names):
        raise PlanError(f"the schema has {len(names)} columns, the DataFrame {len(pdf.columns)}: "
                        f"{list(pdf.columns)}")
    pdf = pdf.set_axis(names, axis=1)
    for name, t in zip(names, types, strict=True):
        if t.root in _CONVERTED:
            pdf[name] = [to_engine(None if _missing(v) else v, t) for v in pdf[name]]
    return Source(f"pandas_{next(_ids)}", tuple(zip(names, types, strict=True)), "pandas", pdf)


# Types whose engine values differ from the Python values a DataFrame holds.
_CONVERTED = ("TIME", "TIMESTAMP_LTZ", "BINARY", "VARBINARY", "BYTES", "ARRAY", "MAP", "MULTISET", "ROW")


def _missing(value: Any) -> bool:
    return value is None or (isinstance(value, float) and value != value) or value is pd.NaT


def spark_source(schema: tuple[tuple[str, DataType], ...], frame: Any) -> Source:
    """The source of ``from_spark``: a Spark DataFrame (held opaquely) whose schema the engine read."""
    return Source(f"spark_{next(_ids)}", schema, "spark", frame)


def _pandas_type(series: pd.Series) -> DataType:
    kind = series.dtype.kind
    if kind == "b" or str(series.dtype) == "boolean":
        return DataTypes.BOOLEAN()
    if kind in "iu" or str(series.dtype).startswith("Int"):
        return DataTypes.BIGINT()
    if kind == "f":
        return DataTypes.DOUBLE()
    if kind == "M":
        return DataTypes.TIMESTAMP(6)
    sample = series.dropna()
    return infer_type(sample.iloc[0]) if len(sample) else DataTypes.STRING()
