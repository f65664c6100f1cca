"""The sources of ``from_elements``, ``from_pandas`` and ``from_spark``, with their schemas checked.

One numbering for all three, so every such source has its own name in a plan.
"""

from __future__ import annotations

import itertools
from typing import Any, Iterable

import pandas as pd

from changeflow.common.types import DataType, DataTypes, infer_type
from changeflow.plan.nodes import Source
from changeflow.plan.type_inference import PlanError

__all__ = ["elements_source", "pandas_source", "spark_source"]

_ids = itertools.count()


def elements_source(elements: Iterable, schema: Any = None, verify_schema: bool = True) -> Source:
    """The source of ``from_elements``: Python tuples (or Rows); ``schema`` is column names or a ROW type."""
    rows = [tuple(e) for e in elements]
    names, types = _schema_of(rows, schema)
    for i, row in enumerate(rows):
        if len(row) != len(names):
            raise PlanError(f"element {i} {row!r} has {len(row)} fields, the schema has {len(names)}: {names}")
        if verify_schema:
            for name, t, value in zip(names, types, row, strict=True):
                if not _fits(value, t):
                    raise PlanError(f"element {i} {row!r}: column {name!r} of type {t} cannot hold "
                                    f"{value!r} ({type(value).__name__})")
    return Source(f"elements_{next(_ids)}", tuple(zip(names, types, strict=True)), "elements", rows)


def pandas_source(pdf: pd.DataFrame, schema: Any = None) -> Source:
    """The source of ``from_pandas``: a pandas DataFrame's rows."""
    if schema is None:
        names = [str(c) for c in pdf.columns]
        types = [_pandas_type(column) for _, column in pdf.items()]
    else:
        names, types = _schema_of(list(pdf.itertuples(index=False, name=None)), schema)
        pdf = pdf.set_axis(names, axis=1)
    return Source(f"pandas_{next(_ids)}", tuple(zip(names, types, strict=True)), "pandas", pdf)


def spark_source(schema: tuple[tuple[str, DataType], ...], frame: Any) -> Source:
    """The source of ``from_spark``: a Spark DataFrame (held opaquely) whose schema the engine read."""
    return Source(f"spark_{next(_ids)}", schema, "spark", frame)


def _schema_of(rows: list[tuple], schema: Any) -> tuple[list[str], list[DataType]]:
    if isinstance(schema, DataType):
        if schema.root != "ROW":
            raise TypeError(f"schema {schema} is not a ROW type: pass DataTypes.ROW([...]) or column names")
        return [n for n, _ in schema.params], [t for _, t in schema.params]
    width = len(rows[0]) if rows else len(schema or [])
    names = list(schema) if schema is not None else [f"_{i + 1}" for i in range(width)]
    types = []
    for i, name in enumerate(names):
        sample = next((r[i] for r in rows if i < len(r) and r[i] is not None), None)
        if sample is None:
            raise PlanError(f"cannot infer the type of column {name!r}: it has no non-null value; "
                            "pass a schema such as DataTypes.ROW([DataTypes.FIELD(...)])")
        types.append(infer_type(sample))
    return names, types


_PYTHON_TYPES = {
    "BOOLEAN": (bool,), "TINYINT": (int,), "SMALLINT": (int,), "INT": (int,), "BIGINT": (int,),
    "FLOAT": (int, float), "DOUBLE": (int, float), "STRING": (str,), "VARCHAR": (str,), "CHAR": (str,),
}
_RANGES = {"TINYINT": 8, "SMALLINT": 16, "INT": 32, "BIGINT": 64}


def _fits(value: Any, t: DataType) -> bool:
    """Whether a Python value can be a value of column type ``t``."""
    if value is None:
        return t.nullable
    accepted = _PYTHON_TYPES.get(t.root)
    if accepted is None:
        return True  # dates, decimals and the like: Arrow checks them when the source is read
    if isinstance(value, bool) and t.root != "BOOLEAN":
        return False
    if not isinstance(value, accepted):
        return False
    if t.root in _RANGES:
        bits = _RANGES[t.root]
        return -(1 << (bits - 1)) <= value < (1 << (bits - 1))
    return True


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
