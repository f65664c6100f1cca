"""Expression trees shared by the Table API, the planner and the runtimes.

Expressions are immutable. The Table API builds them with PyFlink's spelling
(``col("a") % 10``, ``col("v").sum.distinct``, ``.alias("x")``); the planner
types them (:mod:`changeflow.plan.type_inference`) and the Spark runtime compiles them to
Spark Columns (:mod:`changeflow.runtime.spark.columns`), so stateless work never
leaves Spark's JVM; the join kernel evaluates the non-equi part of a join condition
(:mod:`changeflow.kernels.join.condition`). It sits below the planner and the kernels and
imports only :mod:`changeflow.common`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterator

from changeflow.common.types import DataType, infer_type
from changeflow.expression_functions import ExpressionFunctions
from changeflow.functions import UserFunction
from changeflow.json_specs import (RETURNING_TYPES, JsonArraySpec, JsonExistsSpec, JsonObjectSpec, JsonQuerySpec,
                                   JsonValueSpec, choice)

# Aggregate functions by the name a Table API property uses.
AGGREGATES = (
    "count", "count_star", "sum", "sum0", "avg", "min", "max", "first_value", "last_value",
    "listagg", "stddev_pop", "stddev_samp", "var_pop", "var_samp", "collect",
)

BINARY_OPERATORS = {
    "+": "plus", "-": "minus", "*": "times", "/": "divide", "%": "mod",
    "==": "equals", "!=": "not_equals", "<": "less_than", "<=": "less_than_or_equal",
    ">": "greater_than", ">=": "greater_than_or_equal", "and": "and", "or": "or",
}


class Expression(ExpressionFunctions):
    """Base of every expression node, with PyFlink's operators and properties
    (the scalar functions' methods: :mod:`changeflow.expression_functions`).

    >>> from changeflow.table.expressions import col, lit
    >>> str((col("user_id") % 10).alias("b"))
    '(user_id % 10) AS b'
    >>> str(col("v").sum.distinct)
    'SUM(DISTINCT v)'
    """

    def _fn(self, function: str, *args: Any) -> "Call":
        return Call(function, tuple(to_expression(a) for a in args))

    def _const(self, value: Any) -> "Literal":
        return Literal(value, None)

    # --- arithmetic and comparison, as PyFlink's Expression ---------------------------
    def _binary(self, op: str, other: Any, reverse: bool = False) -> "Call":
        other = to_expression(other)
        return Call(op, (other, self) if reverse else (self, other))

    def __add__(self, o): return self._binary("+", o)
    def __radd__(self, o): return self._binary("+", o, True)
    def __sub__(self, o): return self._binary("-", o)
    def __rsub__(self, o): return self._binary("-", o, True)
    def __mul__(self, o): return self._binary("*", o)
    def __rmul__(self, o): return self._binary("*", o, True)
    def __truediv__(self, o): return self._binary("/", o)
    def __rtruediv__(self, o): return self._binary("/", o, True)
    def __mod__(self, o): return self._binary("%", o)
    def __rmod__(self, o): return self._binary("%", o, True)
    def __eq__(self, o): return self._binary("==", o)  # type: ignore[override]
    def __ne__(self, o): return self._binary("!=", o)  # type: ignore[override]
    def __lt__(self, o): return self._binary("<", o)
    def __le__(self, o): return self._binary("<=", o)
    def __gt__(self, o): return self._binary(">", o)
    def __ge__(self, o): return self._binary(">=", o)
    def __and__(self, o): return self._binary("and", o)
    def __rand__(self, o): return self._binary("and", o, True)
    def __or__(self, o): return self._binary("or", o)
    def __ror__(self, o): return self._binary("or", o, True)
    def __invert__(self): return Call("not", (self,))
    def __neg__(self): return Call("negate", (self,))
    __hash__ = object.__hash__

    def __bool__(self) -> bool:
        raise TypeError(
            "an Expression has no truth value; combine conditions with & and | instead of 'and' / 'or'"
        )

    @property
    def is_null(self) -> "Call":
        return Call("is_null", (self,))

    @property
    def is_not_null(self) -> "Call":
        return Call("is_not_null", (self,))

    def alias(self, name: str, *extra_names: str) -> "Alias | MultiAlias":
        if extra_names:
            # Several names: the columns of a call that yields rows (a table function, a table
            # aggregate, an aggregate with a ROW result), as PyFlink's alias(name, *extra_names).
            return MultiAlias(self, (name,) + tuple(extra_names))
        return Alias(self, name)

    def cast(self, data_type: DataType) -> "Call":
        return Call("cast", (self, Literal(data_type, None)))

    # --- aggregates, as PyFlink's properties -------------------------------------------
    def _agg(self, function: str, separator: str | None = None) -> "Agg":
        return Agg(function, self, False, separator)

    @property
    def sum(self) -> "Agg": return self._agg("sum")
    @property
    def sum0(self) -> "Agg": return self._agg("sum0")
    @property
    def count(self) -> "Agg": return self._agg("count")
    @property
    def avg(self) -> "Agg": return self._agg("avg")
    @property
    def min(self) -> "Agg": return self._agg("min")
    @property
    def max(self) -> "Agg": return self._agg("max")
    @property
    def first_value(self) -> "Agg": return self._agg("first_value")
    @property
    def last_value(self) -> "Agg": return self._agg("last_value")
    @property
    def stddev_pop(self) -> "Agg": return self._agg("stddev_pop")
    @property
    def stddev_samp(self) -> "Agg": return self._agg("stddev_samp")
    @property
    def var_pop(self) -> "Agg": return self._agg("var_pop")
    @property
    def var_samp(self) -> "Agg": return self._agg("var_samp")
    @property
    def collect(self) -> "Agg": return self._agg("collect")

    def list_agg(self, separator: str | None = None) -> "Agg":
        return self._agg("listagg", "," if separator is None else separator)

    # --- tree helpers ------------------------------------------------------------------
    def children(self) -> tuple["Expression", ...]:
        return ()

    def walk(self) -> Iterator["Expression"]:
        yield self
        for child in self.children():
            yield from child.walk()

    def contains_aggregate(self) -> bool:
        return any(isinstance(e, Agg) or (isinstance(e, UserCall) and e.is_aggregate) for e in self.walk())

    def output_name(self) -> str | None:
        """The column name this expression gets in a projection, if it has one."""
        return None

    # --- JSON functions, as PyFlink's Expression methods (enum members or their names) ------
    def is_json(self, json_type: Any = None) -> "Call":
        """``IS JSON [VALUE|SCALAR|ARRAY|OBJECT]``: whether this string is JSON (of that kind)."""
        return json_is_json(self, "VALUE" if json_type is None else json_type)

    def json_exists(self, path: str, on_error: Any = None) -> "Call":
        """``JSON_EXISTS(this, path [... ON ERROR])``: whether the path selects a non-null value."""
        return json_exists(self, path, "FALSE" if on_error is None else on_error)

    def json_value(self, path: str, returning_type: DataType | None = None, on_empty: Any = "NULL",
                   default_on_empty: Any = None, on_error: Any = "NULL", default_on_error: Any = None) -> "Call":
        """``JSON_VALUE(this, path RETURNING type ...)``: the scalar at ``path`` (STRING by default)."""
        def default(value: Any) -> "Expression | None":
            if value is None or isinstance(value, Expression):
                return value
            return Literal(value, returning_type.with_nullable(False) if returning_type is not None else None)
        return json_value(self, path, returning_type, on_empty, default(default_on_empty), on_error,
                          default(default_on_error))

    def json_query(self, path: str, wrapping_behavior: Any = "WITHOUT_ARRAY", on_empty: Any = "NULL",
                   on_error: Any = "NULL") -> "Call":
        """``JSON_QUERY(this, path ...)``: the object or array at ``path`` as JSON text."""
        return json_query(self, path, wrapping_behavior, on_empty, on_error)


@dataclass(frozen=True, eq=False)
class Column(Expression):
    name: str

    def __str__(self) -> str:
        return self.name

    def output_name(self) -> str | None:
        return self.name


@dataclass(frozen=True, eq=False)
class Literal(Expression):
    value: Any
    data_type: DataType | None = None

    def type(self) -> DataType:
        if self.data_type is not None:
            return self.data_type
        if self.value is None:
            raise TypeError("a NULL literal needs a type: lit(None, DataTypes.X())")
        t = infer_type(self.value)
        # Flink types a Python int literal as INT when it fits (py4j passes a Java int).
        if t.root == "BIGINT" and -(2**31) <= self.value < 2**31:
            t = DataType("INT", False)
        # and a Python str as CHAR(length), as SQL types a string literal.
        if isinstance(self.value, str):
            t = DataType("CHAR", False, (len(self.value),))
        return t.with_nullable(False)

    def __str__(self) -> str:
        return repr(self.value) if isinstance(self.value, str) else str(self.value)


@dataclass(frozen=True, eq=False)
class Call(Expression):
    function: str
    args: tuple[Expression, ...]

    def children(self) -> tuple[Expression, ...]:
        return self.args

    def constant_arg(self, index: int) -> Any:
        """The value of argument ``index``, which this function takes as a constant (CAST's
        target DataType, EXTRACT's unit): the front ends build that argument as a Literal."""
        arg = self.args[index]
        if not isinstance(arg, Literal):
            raise TypeError(f"{self.function.upper()} takes a constant as argument {index + 1}, got {arg}")
        return arg.value

    def __str__(self) -> str:
        if self.function in BINARY_OPERATORS:
            op = self.function.upper() if self.function in ("and", "or") else self.function
            return f"({self.args[0]} {op} {self.args[1]})"
        if self.function in ("is_null", "is_not_null"):
            return f"{self.args[0]} {self.function.replace('_', ' ').upper()}"
        if self.function == "cast":
            return f"CAST({self.args[0]} AS {self.constant_arg(1)})"
        if self.function == "get_field":  # a ROW's field, as Flink prints it
            return f"{self.args[0]}.{self.constant_arg(1)}"
        return f"{self.function.upper()}({', '.join(str(a) for a in self.args)})"


@dataclass(frozen=True, eq=False)
class Agg(Expression):
    function: str
    arg: Expression | None
    is_distinct: bool = False
    separator: str | None = None

    @property
    def distinct(self) -> "Agg":
        """This aggregate over distinct values, as PyFlink's ``.distinct``."""
        return Agg(self.function, self.arg, True, self.separator)

    def children(self) -> tuple[Expression, ...]:
        return () if self.arg is None else (self.arg,)

    def __str__(self) -> str:
        name = "LISTAGG" if self.function == "listagg" else self.function.upper()
        if self.function == "count_star":
            return "COUNT(*)"
        inner = ("DISTINCT " if self.is_distinct else "") + str(self.arg)
        if self.separator is not None:
            inner += f", {self.separator!r}"
        return f"{name}({inner})"


@dataclass(frozen=True, eq=False)
class UserCall(Expression):
    """A call of a user-defined function (:mod:`changeflow.functions`) with ``args``.

    Scalar calls stand where any expression may; a table function's call stands
    in a lateral join or ``flat_map``; an aggregate's where an :class:`Agg` may.
    """

    function: UserFunction
    args: tuple[Expression, ...]

    @property
    def is_aggregate(self) -> bool:
        return self.function.kind in ("aggregate", "table_aggregate")

    def children(self) -> tuple[Expression, ...]:
        return self.args

    def __str__(self) -> str:
        return f"{self.function.name}({', '.join(str(a) for a in self.args)})"


@dataclass(frozen=True, eq=False)
class MultiAlias(Expression):
    """``call.alias('a', 'b')``: names for the columns of a call that yields rows
    (``split(col('line')).alias('word', 'length')``). Only where such a call may stand
    (``aggregate``, ``flat_aggregate``, lateral joins, ``map``); anywhere else it is refused.
    """

    child: Expression
    names: tuple[str, ...]

    def children(self) -> tuple[Expression, ...]:
        return (self.child,)

    def __str__(self) -> str:
        return f"{self.child} AS ({', '.join(self.names)})"


@dataclass(frozen=True, eq=False)
class Alias(Expression):
    child: Expression
    name: str

    def children(self) -> tuple[Expression, ...]:
        return (self.child,)

    def __str__(self) -> str:
        return f"{self.child} AS {self.name}"

    def output_name(self) -> str | None:
        return self.name


def to_expression(value: Any) -> Expression:
    return value if isinstance(value, Expression) else Literal(value)


def strip_alias(expr: Expression) -> Expression:
    while isinstance(expr, Alias):
        expr = expr.child
    return expr


def replace(expr: Expression, mapping: dict[int, Expression],
            by_text: dict[str, Expression] | None = None) -> Expression:
    """Copy of ``expr`` with nodes replaced: by identity (``id`` in ``mapping``) or,
    for calls outside aggregates, by structure (their text in ``by_text``), so that
    ``group_by(col("s") % 3).select((col("s") % 3).alias("b"))`` finds its key.
    """
    by_text = by_text or {}
    if id(expr) in mapping:
        return mapping[id(expr)]
    if isinstance(expr, Call):
        if str(expr) in by_text:
            return by_text[str(expr)]
        return Call(expr.function, tuple(replace(a, mapping, by_text) for a in expr.args))
    if isinstance(expr, Alias):
        return Alias(replace(expr.child, mapping, by_text), expr.name)
    if isinstance(expr, UserCall):
        if not expr.is_aggregate and str(expr) in by_text:
            return by_text[str(expr)]
        return UserCall(expr.function, tuple(replace(a, mapping, by_text) for a in expr.args))
    if isinstance(expr, Agg) and expr.arg is not None:
        return Agg(expr.function, replace(expr.arg, mapping), expr.is_distinct, expr.separator)
    return expr


# --- JSON function calls (their clauses are specs: changeflow.json_specs) ----------------------

def _null() -> Literal:
    return Literal(None, DataType("NULL", True))


def json_value(text: Expression, path: Any, returning: DataType | None = None, on_empty: Any = "NULL",
               default_on_empty: Expression | None = None, on_error: Any = "NULL",
               default_on_error: Expression | None = None) -> Call:
    """``JSON_VALUE(text, path [RETURNING t] [... ON EMPTY] [... ON ERROR])``."""
    returning = (returning or DataType("STRING", True)).with_nullable(True)
    if returning.root not in RETURNING_TYPES:
        raise NotImplementedError(f"Unsupported type '{returning}' for RETURNING in JSON_VALUE() "
                                  f"(Flink 2.3 accepts STRING, BOOLEAN, INT and DOUBLE)")
    behaviours = ("NULL", "ERROR", "DEFAULT")
    spec = JsonValueSpec(_path(path, "JSON_VALUE"), returning, choice(on_empty, behaviours, "ON EMPTY"),
                         choice(on_error, behaviours, "ON ERROR"))
    return Call("json_value", (text, Literal(spec, None), _null() if default_on_empty is None else default_on_empty,
                               _null() if default_on_error is None else default_on_error))


def json_query(text: Expression, path: Any, wrapper: Any = "WITHOUT_ARRAY", on_empty: Any = "NULL",
               on_error: Any = "NULL") -> Call:
    """``JSON_QUERY(text, path [WITH [CONDITIONAL|UNCONDITIONAL] ARRAY WRAPPER] [... ON EMPTY] [... ON ERROR])``."""
    behaviours = ("NULL", "ERROR", "EMPTY_ARRAY", "EMPTY_OBJECT")
    spec = JsonQuerySpec(_path(path, "JSON_QUERY"),
                         choice(wrapper, ("WITHOUT_ARRAY", "CONDITIONAL_ARRAY", "UNCONDITIONAL_ARRAY"), "wrapper"),
                         choice(on_empty, behaviours, "ON EMPTY"), choice(on_error, behaviours, "ON ERROR"))
    return Call("json_query", (text, Literal(spec, None)))


def json_exists(text: Expression, path: Any, on_error: Any = "FALSE") -> Call:
    """``JSON_EXISTS(text, path [TRUE|FALSE|UNKNOWN|ERROR ON ERROR])``."""
    spec = JsonExistsSpec(_path(path, "JSON_EXISTS"), choice(on_error, ("TRUE", "FALSE", "UNKNOWN", "ERROR"),
                                                            "ON ERROR"))
    return Call("json_exists", (text, Literal(spec, None)))


def json_is_json(text: Expression, kind: Any = "VALUE") -> Call:
    """``text IS JSON [VALUE|SCALAR|ARRAY|OBJECT]``."""
    return Call("is_json", (text, Literal(choice(kind, ("VALUE", "SCALAR", "ARRAY", "OBJECT"), "IS JSON kind"),
                                          None)))


def json_object(pairs: list[tuple[Any, Any]], on_null: Any = "NULL") -> Call:
    """``JSON_OBJECT(KEY k VALUE v, ... [NULL|ABSENT] ON NULL)``: keys are non-NULL string literals."""
    keys = [k.value if isinstance(k, Literal) else k for k, _ in pairs]
    for key in keys:
        if not isinstance(key, str):
            raise ValueError(f"JSON_OBJECT keys must be non-NULL string literals, got {key!r}")
    for key in keys:
        if keys.count(key) > 1:
            raise ValueError(f"JSON_OBJECT has the key {key!r} twice")
    spec = JsonObjectSpec(tuple(keys), choice(on_null, ("NULL", "ABSENT"), "ON NULL"))
    return Call("json_object", (Literal(spec, None), *(to_expression(value) for _, value in pairs)))


def json_array(values: list[Any], on_null: Any = "ABSENT") -> Call:
    """``JSON_ARRAY(v, ... [NULL|ABSENT] ON NULL)``."""
    spec = JsonArraySpec(choice(on_null, ("NULL", "ABSENT"), "ON NULL"))
    return Call("json_array", (Literal(spec, None), *(to_expression(v) for v in values)))


def json_string(value: Any) -> Call:
    """``JSON_STRING(v)``: the value serialized as JSON."""
    return Call("json_string", (to_expression(value),))


def json_text(text: Any) -> Call:
    """``JSON(text)``: pre-formatted JSON inserted as it is into JSON_OBJECT / JSON_ARRAY."""
    return Call("json", (to_expression(text),))


def json_array_agg(item: Any, on_null: Any = "ABSENT") -> "Agg":
    """``JSON_ARRAYAGG(item [NULL|ABSENT] ON NULL)``, aggregating the item as JSON text.

    As Flink wraps the argument into ``JSON_STRING``, the item is rendered here by a
    one-element ``JSON_ARRAY`` (a nested JSON_OBJECT / JSON_ARRAY stays JSON); the
    function name carries the ON NULL clause, as Flink's JSON_ARRAYAGG_ABSENT_ON_NULL.
    """
    on = choice(on_null, ("NULL", "ABSENT"), "ON NULL")
    return Agg(f"json_arrayagg_{on.lower()}_on_null", json_array([item], on))


def json_object_agg(key: Any, value: Any, on_null: Any = "NULL") -> "Agg":
    """``JSON_OBJECTAGG(KEY key VALUE value [NULL|ABSENT] ON NULL)``, aggregating ``[key, value]`` as JSON text."""
    on = choice(on_null, ("NULL", "ABSENT"), "ON NULL")
    return Agg(f"json_objectagg_{on.lower()}_on_null", json_array([key, value], "NULL"))


def _path(path: Any, function: str) -> str:
    # Checked against the JSONPath grammar when the plan is typed (plan.json_calls).
    if not isinstance(path, str):
        raise ValueError(f"{function}'s path must be a string literal, got {path!r}")
    return path
