"""PyFlink's ``Expression`` methods and properties (``col('a').upper_case``, ``.between(1, 3)``...).

:class:`ExpressionFunctions` is a base of :class:`changeflow.expressions.Expression`:
each method builds a call of a function the planner types and the Spark runtime
compiles already (the SQL front end's built-ins), so ``col('s').upper_case`` and
``UPPER(s)`` are one plan. A PyFlink method without such a function raises
:class:`NotImplementedError` naming it (:data:`UNSUPPORTED_METHODS`), never
``AttributeError``. The time units of ``extract``, ``floor`` and
``timestamp_diff`` are PyFlink's enums, :class:`TimeIntervalUnit` and
:class:`TimePointUnit`. Imports only :mod:`changeflow.common`.
"""

from __future__ import annotations

from enum import Enum
from typing import Any

from changeflow.common.types import DataType


class TimeIntervalUnit(Enum):
    """Units of ``extract`` and ``floor`` (PyFlink's ``pyflink.table.expression.TimeIntervalUnit``)."""

    YEAR = 0
    YEAR_TO_MONTH = 1
    QUARTER = 2
    MONTH = 3
    WEEK = 4
    DAY = 5
    DAY_TO_HOUR = 6
    DAY_TO_MINUTE = 7
    DAY_TO_SECOND = 8
    HOUR = 9
    SECOND = 10
    HOUR_TO_MINUTE = 11
    HOUR_TO_SECOND = 12
    MINUTE = 13
    MINUTE_TO_SECOND = 14


class TimePointUnit(Enum):
    """Units of ``timestamp_diff`` (PyFlink's ``pyflink.table.expression.TimePointUnit``)."""

    YEAR = 0
    MONTH = 1
    DAY = 2
    HOUR = 3
    MINUTE = 4
    SECOND = 5
    QUARTER = 6
    WEEK = 7
    MILLISECOND = 8
    MICROSECOND = 9


def unit_name(unit: Any, allowed: tuple[str, ...], what: str) -> str:
    """The name of a PyFlink time unit (an enum member or its name) that ``what`` supports."""
    name = unit.name if isinstance(unit, Enum) else str(unit).upper()
    if name not in allowed:
        raise NotImplementedError(f"{what} with unit {name} is not supported; units: {', '.join(allowed)}")
    return name


class UnsupportedExpressionError(NotImplementedError, AttributeError):
    """A PyFlink ``Expression`` member changeflow does not implement. Also an AttributeError, so that
    ``hasattr(expr, name)`` stays False for code that probes attributes."""


# PyFlink Expression members that changeflow has no function for: they raise, naming themselves.
UNSUPPORTED_METHODS = frozenset([
    "cosh", "sinh", "sin", "cos", "tan", "cot", "asin", "acos", "atan", "tanh", "degrees", "radians", "sign",
    "bin", "hex", "unhex", "truncate", "percentile", "starts_with", "ends_with", "translate", "similar",
    "overlay", "regexp", "regexp_count", "regexp_extract", "regexp_extract_all", "regexp_instr",
    "regexp_substr", "from_base64", "to_base64", "ascii", "chr", "decode", "encode", "instr", "locate",
    "url_decode", "url_encode", "inet_aton", "inet_ntoa", "parse_url", "printf", "btrim", "repeat",
    "str_to_map", "elt", "to_time", "ceil_to", "get", "flatten", "at", "cardinality", "element",
    "array_append", "array_contains", "array_distinct", "array_position", "array_prepend", "array_remove",
    "array_reverse", "array_slice", "array_sort", "array_union", "array_concat", "array_max", "array_join",
    "array_min", "array_except", "array_intersect", "split", "map_keys", "map_union", "map_values",
    "map_entries", "proctime", "year", "years", "quarter", "quarters", "month", "months", "week",
    "weeks",
    "md5", "sha1", "sha224", "sha256", "sha384", "sha512", "sha2", "hash_code", "as_argument",
    "array_agg", "object_update", "bitmap_and", "bitmap_andnot", "bitmap_and_agg",
    "bitmap_and_cardinality_agg", "bitmap_build", "bitmap_build_agg", "bitmap_build_cardinality_agg",
    "bitmap_cardinality", "bitmap_from_bytes", "bitmap_or", "bitmap_or_agg", "bitmap_or_cardinality_agg",
    "bitmap_to_array", "bitmap_to_bytes", "bitmap_to_string", "bitmap_xor", "bitmap_xor_agg",
    "bitmap_xor_cardinality_agg",
])


class ExpressionFunctions:
    """PyFlink's scalar methods of ``Expression``; ``_fn(name, *args)`` (on Expression) builds the call."""

    def _fn(self, function: str, *args: Any) -> Any:
        raise NotImplementedError  # Expression implements it

    def _const(self, value: Any) -> Any:
        raise NotImplementedError  # Expression implements it: a constant argument (a Literal)

    def __getattr__(self, name: str) -> Any:
        # Only for names the class lacks: a PyFlink method changeflow does not map is named, not missing.
        if name in UNSUPPORTED_METHODS:
            raise UnsupportedExpressionError(f"Expression.{name} (PyFlink's) is not supported by changeflow")
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def __getitem__(self, index: Any) -> Any:
        raise NotImplementedError("Expression[index] (PyFlink's at/get: element of an ARRAY, MAP or ROW) is not "
                                  "supported by changeflow")

    def __abs__(self): return self._fn("abs", self)
    def __pow__(self, other): return self._fn("power", self, other)
    def __rpow__(self, other): return self._fn("power", other, self)

    # --- arithmetic -----------------------------------------------------------------------
    @property
    def exp(self): return self._fn("exp", self)
    @property
    def log10(self): return self._fn("log10", self)
    @property
    def ln(self): return self._fn("ln", self)
    @property
    def log2(self): return self._fn("/", self._fn("ln", self), self._fn("ln", 2))

    def log(self, base: Any = None):
        """The natural logarithm, or the logarithm to ``base`` (Flink's ``LOG(base, x)``)."""
        if base is None:
            return self._fn("ln", self)
        return self._fn("/", self._fn("ln", self), self._fn("ln", base))

    @property
    def sqrt(self): return self._fn("sqrt", self)
    @property
    def abs(self): return self._fn("abs", self)

    def round(self, places: Any = 0): return self._fn("round", self, places)

    def floor(self, time_interval_unit: Any = None):
        """The number rounded down; with a unit, the time point rounded down to it (``FLOOR(t TO unit)``)."""
        if time_interval_unit is None:
            return self._fn("floor", self)
        unit = unit_name(time_interval_unit, ("YEAR", "MONTH", "DAY", "HOUR", "MINUTE", "SECOND"), "floor")
        return self._fn("floor_to", self, self._const(unit))

    def ceil(self, time_interval_unit: Any = None):
        if time_interval_unit is not None:
            raise NotImplementedError("ceil(TimeIntervalUnit) (CEIL TO a time unit) is not supported by changeflow")
        return self._fn("ceil", self)

    # --- conditions ---------------------------------------------------------------------
    def between(self, lower_bound: Any, upper_bound: Any):
        return self._fn("and", self._fn(">=", self, lower_bound), self._fn("<=", self, upper_bound))

    def not_between(self, lower_bound: Any, upper_bound: Any):
        return self._fn("or", self._fn("<", self, lower_bound), self._fn(">", self, upper_bound))

    def then(self, if_true: Any, if_false: Any):
        """``cond.then(a, b)``: a where the condition is true, else b (Flink's ``?:``)."""
        return self._fn("case", self, if_true, if_false)

    def if_null(self, null_replacement: Any): return self._fn("ifnull", self, null_replacement)

    @property
    def is_true(self): return self._fn("is_true", self)
    @property
    def is_false(self): return self._fn("is_false", self)
    @property
    def is_not_true(self): return self._fn("is_not_true", self)
    @property
    def is_not_false(self): return self._fn("is_not_false", self)

    def in_(self, first_element_or_table: Any, *remaining_elements: Any):
        if not _is_value(first_element_or_table):
            raise NotImplementedError("in_(table) (IN with a subquery) is not supported by changeflow")
        return self._fn("in", self, first_element_or_table, *remaining_elements)

    # --- types ------------------------------------------------------------------------------
    def try_cast(self, data_type: DataType): return self._fn("try_cast", self, self._const(data_type))

    # --- ordering (only in order_by) ----------------------------------------------------
    @property
    def asc(self): return self._fn("asc", self)
    @property
    def desc(self): return self._fn("desc", self)

    # --- strings ----------------------------------------------------------------------------
    def concat(self, other: Any): return self._fn("concat", self, other)

    def substring(self, begin_index: Any, length: Any = None):
        return self._fn("substring", self, begin_index) if length is None else \
            self._fn("substring", self, begin_index, length)

    substr = substring

    def _trim(self, position: str, character: Any):
        return self._fn("trim", self, self._const(position), " " if character is None else character)

    def trim_leading(self, character: Any = None): return self._trim("LEADING", character)
    def trim_trailing(self, character: Any = None): return self._trim("TRAILING", character)
    def trim(self, character: Any = None): return self._trim("BOTH", character)

    def ltrim(self, trim_str: Any = None):
        return self._fn("ltrim", self) if trim_str is None else self._trim("LEADING", trim_str)

    def rtrim(self, trim_str: Any = None):
        return self._fn("rtrim", self) if trim_str is None else self._trim("TRAILING", trim_str)

    def replace(self, search: Any = None, replacement: Any = None):
        return self._fn("replace", self, search, replacement)

    @property
    def char_length(self): return self._fn("char_length", self)
    @property
    def upper_case(self): return self._fn("upper", self)
    @property
    def lower_case(self): return self._fn("lower", self)
    @property
    def init_cap(self): return self._fn("initcap", self)
    @property
    def reverse(self): return self._fn("reverse", self)

    def like(self, pattern: Any = None, escape: Any = None):
        if escape is not None:
            raise NotImplementedError("like(pattern, escape) (LIKE ... ESCAPE) is not supported by changeflow")
        return self._fn("like", self, pattern)

    def position(self, haystack: Any = None): return self._fn("position", self, haystack)
    def lpad(self, length: Any, pad: Any): return self._fn("lpad", self, length, pad)
    def rpad(self, length: Any, pad: Any): return self._fn("rpad", self, length, pad)

    def regexp_replace(self, regex: Any, replacement: Any):
        return self._fn("regexp_replace", self, regex, replacement)

    def regexp_extract(self, regex: Any, extract_index: Any = None):
        """The ``extract_index``-th group (0: the whole match) of the first match of ``regex``; NULL if none."""
        if extract_index is None:
            return self._fn("regexp_extract", self, regex)
        return self._fn("regexp_extract", self, regex, extract_index)

    def left(self, length: Any): return self._fn("left", self, length)
    def right(self, length: Any): return self._fn("right", self, length)
    def split_index(self, separator: Any, index: Any): return self._fn("split_index", self, separator, index)

    # --- time -------------------------------------------------------------------------------
    @property
    def to_date(self): return self._fn("to_date", self)
    @property
    def to_timestamp(self): return self._fn("to_timestamp", self)

    def extract(self, time_interval_unit: Any):
        unit = unit_name(time_interval_unit, ("YEAR", "QUARTER", "MONTH", "WEEK", "DAY", "HOUR", "MINUTE",
                                              "SECOND"), "extract")
        return self._fn("extract", self._const(unit), self)

    # --- windows (changeflow/table/window.py): intervals, window properties, OVER -------------
    # ``lit(10).seconds`` is an interval of 10 s: a window's size, slide, gap or RANGE bound (the
    # window planner reads it; elsewhere it is refused by name, type_inference's WINDOW_CALLS).
    @property
    def milli(self): return self._fn("interval", self, self._const("MILLISECOND"))
    @property
    def millis(self): return self._fn("interval", self, self._const("MILLISECOND"))
    @property
    def second(self): return self._fn("interval", self, self._const("SECOND"))
    @property
    def seconds(self): return self._fn("interval", self, self._const("SECOND"))
    @property
    def minute(self): return self._fn("interval", self, self._const("MINUTE"))
    @property
    def minutes(self): return self._fn("interval", self, self._const("MINUTE"))
    @property
    def hour(self): return self._fn("interval", self, self._const("HOUR"))
    @property
    def hours(self): return self._fn("interval", self, self._const("HOUR"))
    @property
    def day(self): return self._fn("interval", self, self._const("DAY"))
    @property
    def days(self): return self._fn("interval", self, self._const("DAY"))

    # ``col('w').start``: a property of the group window aliased ``w``.
    @property
    def start(self): return self._fn("window_property", self, self._const("start"))
    @property
    def end(self): return self._fn("window_property", self, self._const("end"))
    @property
    def rowtime(self): return self._fn("window_property", self, self._const("rowtime"))
    @property
    def proctime(self): return self._fn("window_property", self, self._const("proctime"))

    def over(self, alias: Any):
        """This aggregate over the OVER window aliased ``alias`` (``col('v').sum.over(col('w'))``)."""
        return self._fn("over", self, alias)


def _is_value(value: Any) -> bool:
    """Whether ``value`` is a value or an expression (not a Table, as ``in_`` also takes)."""
    return not hasattr(value, "plan") or hasattr(value, "walk")
