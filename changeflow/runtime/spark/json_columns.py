"""Compiles JSON function calls (:mod:`changeflow.plan.json_calls`) to Spark Columns.

Spark's own JSON functions do not follow Flink's rules (``get_json_object`` has neither lax
and strict modes nor Flink's error behaviours, formats numbers its own way, and has no
ON EMPTY / ON ERROR; ``to_json`` keeps a struct's field order where Flink sorts keys), so
every JSON function runs as a vectorised Python function (``pandas_udf``: Arrow batches, one
Python call per batch) over :mod:`changeflow.kernels.json`, which implements Flink's rules.
Spark's JSON writer does one part natively: it renders the values given to JSON_OBJECT,
JSON_ARRAY and JSON_STRING (``to_json`` of a struct of them; it is Jackson, like Flink's, so
numbers and strings come out as Flink writes them), and Python only assembles and sorts.

A row that makes a function fail (``ERROR ON ERROR``, a RETURNING type the value cannot
take) fails the query with an error naming the function call and the input.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pandas as pd
from pyspark.sql import Column
from pyspark.sql import functions as F
from pyspark.sql import types as T

from changeflow.common.types import DataType
from changeflow.expressions import Call, Expression, Literal
from changeflow.kernels.json import construct, functions

__all__ = ["compile_json"]

Compile = Callable[[Expression], Column]


def compile_json(expr: Call, compile_arg: Compile, to_spark: Callable[[DataType], T.DataType],
                 result_type: DataType) -> Column:
    """The Column computing a JSON function call; ``compile_arg`` compiles its value arguments."""
    f = expr.function
    where = str(expr)
    out = to_spark(result_type)
    if f == "json_value":
        return _json_value(expr, compile_arg, out, where)
    if f in ("json_query", "json_exists", "is_json"):
        spec = _constant(expr.args[1])
        text = compile_arg(expr.args[0])
        return _vectorised(_text_function(f, spec, where), out)(text)
    if f in ("json_object", "json_array"):
        return _construct(expr, compile_arg, out, where)
    if f == "json_string":
        rendered = F.to_json(F.struct(compile_arg(expr.args[0]).alias("v0")), _RENDER_OPTIONS)
        return _vectorised(_per_value(lambda row: construct.json_string(construct.read_rendered(row).get("v0")),
                                       where), out)(rendered)
    raise NotImplementedError(f"{where}: the JSON function {f} has no Spark translation here")


# Spark renders timestamps the way Flink's JSON functions write them (ISO-8601 with 'T'); a NULL
# field is left out, which the assembling side reads as a SQL NULL.
_RENDER_OPTIONS = {"timestampFormat": "yyyy-MM-dd'T'HH:mm:ss[.SSSSSS]",
                   "timestampNTZFormat": "yyyy-MM-dd'T'HH:mm:ss[.SSSSSS]", "ignoreNullFields": "true"}


def _vectorised(function: Callable[..., pd.Series], out: T.DataType) -> Callable[..., Column]:
    """A scalar pandas UDF (Series in, Series out) returning ``out``."""
    # pyspark's stubs type pandas_udf's function argument by its older call forms only.
    return F.pandas_udf(function, out)  # pyright: ignore[reportCallIssue, reportArgumentType]


def _constant(arg: Expression) -> Any:
    assert isinstance(arg, Literal), arg
    return arg.value


def _failing(where: str, error: Exception, text: Any) -> Exception:
    shown = text if not isinstance(text, str) or len(text) <= 200 else text[:200] + "..."
    return ValueError(f"{where} failed on input {shown!r}: {error}")


def _per_value(function: Callable[[Any], Any], where: str) -> Callable[[pd.Series], pd.Series]:
    def run(values: pd.Series) -> pd.Series:
        out = []
        for value in values:
            value = None if value is None or value is pd.NA or (isinstance(value, float) and value != value) \
                else value
            try:
                out.append(function(value))
            except (ValueError, TypeError) as error:
                raise _failing(where, error, value) from None
        return pd.Series(out, dtype=object)
    return run


def _text_function(f: str, spec: Any, where: str) -> Callable[[pd.Series], pd.Series]:
    if f == "is_json":
        return _per_value(lambda text: functions.is_json(text, spec), where)
    path = functions.prepare_path(spec.path)
    if f == "json_query":
        def query(text: Any) -> Any:
            return None if text is None else functions.json_query(text, path, spec.wrapper, spec.on_empty,
                                                                  spec.on_error)
        return _per_value(query, where)

    def exists(text: Any) -> Any:
        return None if text is None else functions.json_exists(text, path, spec.on_error)
    return _per_value(exists, where)


def _json_value(expr: Call, compile_arg: Compile, out: T.DataType, where: str) -> Column:
    spec = _constant(expr.args[1])
    path = functions.prepare_path(spec.path)
    convert = functions.returning(spec.returning.root)
    # A default is a column only where its behaviour is DEFAULT (a NULL literal has no Spark type).
    empty_col = compile_arg(expr.args[2]) if spec.on_empty == "DEFAULT" else F.lit(None).cast("string")
    error_col = compile_arg(expr.args[3]) if spec.on_error == "DEFAULT" else F.lit(None).cast("string")

    def run(texts: pd.Series, empties: pd.Series, errors: pd.Series) -> pd.Series:
        out_values = []
        for text, empty, error in zip(texts, empties, errors, strict=True):
            if text is None:
                out_values.append(None)
                continue
            try:
                out_values.append(functions.json_value(text, path, spec.on_empty, _python(empty), spec.on_error,
                                                       _python(error), convert))
            except ValueError as failure:
                raise _failing(where, failure, text) from None
        return pd.Series(out_values, dtype=object)
    return _vectorised(run, out)(compile_arg(expr.args[0]), empty_col, error_col)


def _python(value: Any) -> Any:
    """A pandas cell as a plain Python value (NaN / NA -> None, numpy scalars -> Python)."""
    if value is None or value is pd.NA or (isinstance(value, float) and value != value):
        return None
    item = getattr(value, "item", None)  # a numpy scalar
    return item() if callable(item) else value


def _construct(expr: Call, compile_arg: Compile, out: T.DataType, where: str) -> Column:
    spec = _constant(expr.args[0])
    values = expr.args[1:]
    raw = []
    fields = []
    for i, value in enumerate(values):
        if isinstance(value, Call) and value.function == "json":
            raw.append("parse")
            column = compile_arg(value.args[0])
        else:
            raw.append("json" if isinstance(value, Call) and value.function in ("json_object", "json_array") else "")
            column = compile_arg(value)
        fields.append(column.alias(f"v{i}"))
    if not fields:  # JSON_OBJECT() / JSON_ARRAY()
        return F.lit("{}" if expr.function == "json_object" else "[]")
    rendered = F.to_json(F.struct(*fields), _RENDER_OPTIONS)
    keys = getattr(spec, "keys", ())

    building_object = expr.function == "json_object"

    def assemble(row_json: str) -> str:
        record = construct.read_rendered(row_json)
        nodes = [construct.value_node(record.get(f"v{i}"), how) for i, how in enumerate(raw)]
        if building_object:
            return construct.json_object(keys, nodes, spec.on_null)
        return construct.json_array(nodes, spec.on_null)
    return _vectorised(_per_value(assemble, where), out)(rendered)
