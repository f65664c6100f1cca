"""Translates sqlglot scalar and aggregate expressions into plan expressions.

SQL names columns through a :class:`Scope` (the FROM clause's tables, each
with an optional qualifier); the result refers to the plan's column names, so
the Table API's builder, type inference and Spark compilation take it as
they take a Table API expression. Aggregate calls become
:class:`~changeflow.expressions.Agg` nodes for ``builder.aggregate``.

Every construct without a translation raises :class:`SqlError` naming it and
where it is in the statement; nothing is guessed.
"""

from __future__ import annotations

import decimal
from dataclasses import dataclass

from sqlglot import exp

from changeflow.common.types import DataType, DataTypes
from changeflow.expressions import Agg, Call, Expression, Literal, UserCall
from changeflow.functions import UserFunction
from changeflow.sql import json_functions, user_functions
from changeflow.sql.errors import SqlError, located, unsupported
from changeflow.sql.row_fields import column_or_field
from changeflow.sql.type_names import cast_type


@dataclass(frozen=True)
class ScopeColumn:
    qualifier: str | None  # table name or alias the column can be qualified with
    name: str  # the name SQL uses
    plan_name: str  # the column of the plan node


class Scope:
    """The columns visible to an expression: ``t.id`` or ``id`` -> a plan column."""

    def __init__(self, columns: list[ScopeColumn], outer_names: dict[str, str] | None = None) -> None:
        self.columns = columns

    @staticmethod
    def of(names: list[str], qualifier: str | None) -> "Scope":
        return Scope([ScopeColumn(qualifier, n, n) for n in names])

    def qualified(self, qualifier: str | None) -> "Scope":
        """This scope with every column qualified by ``qualifier`` (a FROM alias)."""
        return Scope([ScopeColumn(qualifier, c.name, c.plan_name) for c in self.columns])

    def lookup(self, node: exp.Column, sql: str | None) -> str:
        name, qualifier = node.name, node.table or None
        found = [c for c in self.columns if c.name == name and (qualifier is None or c.qualifier == qualifier)]
        if len(found) == 1:
            return found[0].plan_name
        if not found:
            known = ", ".join(f"{c.qualifier}.{c.name}" if c.qualifier else c.name for c in self.columns)
            what = f"{qualifier}.{name}" if qualifier else name
            raise SqlError(located(f"column '{what}' not found; available columns: {known or '(none)'}",
                                   node, sql))
        tables = ", ".join(c.qualifier or "(subquery)" for c in found)
        raise SqlError(located(f"column '{name}' is ambiguous: it is in {tables}; qualify it", node, sql))

    def star(self, qualifier: str | None) -> list[ScopeColumn]:
        return [c for c in self.columns if qualifier is None or c.qualifier == qualifier]


# sqlglot type names -> Flink's
_TYPES = {
    "BOOLEAN": "BOOLEAN", "TINYINT": "TINYINT", "SMALLINT": "SMALLINT", "INT": "INT", "BIGINT": "BIGINT",
    "FLOAT": "FLOAT", "DOUBLE": "DOUBLE", "TEXT": "STRING", "DATE": "DATE",
}


def flink_type(node: exp.DataType, sql: str | None, at: exp.Expr | None = None) -> DataType:
    """The Flink type a SQL type name denotes (``CAST(x AS DECIMAL(10, 2))``)."""
    kind = node.this.name if hasattr(node.this, "name") else str(node.this)
    params = [int(p.this.name) for p in node.expressions if isinstance(p, exp.DataTypeParam)]
    if kind in _TYPES:
        return DataType(_TYPES[kind])
    if kind in ("VARCHAR", "CHAR"):
        if kind == "VARCHAR" and (not params or params[0] == 2147483647):
            return DataTypes.STRING()
        return DataType(kind, True, (params[0] if params else 1,))
    if kind == "DECIMAL":
        precision, scale = (params + [10, 0][len(params):])[:2] if params else (10, 0)
        return DataTypes.DECIMAL(precision, scale)
    if kind in ("TIMESTAMP", "DATETIME"):
        return DataTypes.TIMESTAMP(params[0] if params else 6)
    if kind == "TIMESTAMPLTZ":
        return DataType("TIMESTAMP_LTZ", True, (params[0] if params else 6,))
    if (other := cast_type(node, params, lambda n: flink_type(n, sql, at))) is not None:  # BYTES, TIME, MAP
        return other
    error = unsupported("type", node, sql)
    if at is not None and at is not node:
        error = SqlError(located(str(error), at, sql))
    raise error


def literal(node: exp.Expr, sql: str | None) -> Literal:
    """A SQL literal with Flink's type: ``'abc'`` is CHAR(3) NOT NULL, ``2.5`` DECIMAL(2, 1) NOT NULL."""
    if isinstance(node, exp.Null):
        return Literal(None, DataType("NULL", True))
    if isinstance(node, exp.Boolean):
        return Literal(bool(node.this), DataTypes.BOOLEAN(False))
    assert isinstance(node, exp.Literal)
    text = node.this
    if node.is_string:
        return Literal(text, DataType("CHAR", False, (max(1, len(text)),)))
    if "e" in text.lower():
        return Literal(float(text), DataTypes.DOUBLE(False))
    if "." in text:
        value = decimal.Decimal(text)
        digits = text.lstrip("-").replace(".", "").lstrip("0") or "0"
        scale = len(text.split(".")[1])
        return Literal(value, DataTypes.DECIMAL(max(len(digits), scale, 1), scale, False))
    value = int(text)
    if -(2**31) <= value < 2**31:
        return Literal(value, DataTypes.INT(False))
    if -(2**63) <= value < 2**63:
        return Literal(value, DataTypes.BIGINT(False))
    return Literal(decimal.Decimal(value), DataTypes.DECIMAL(len(text), 0, False))


_BINARY = {
    exp.Add: "+", exp.Sub: "-", exp.Mul: "*", exp.Div: "/", exp.Mod: "%",
    exp.EQ: "==", exp.NEQ: "!=", exp.LT: "<", exp.LTE: "<=", exp.GT: ">", exp.GTE: ">=",
    exp.And: "and", exp.Or: "or",
}

# Units of ``INTERVAL 'n' UNIT`` literals added to dates and timestamps.
_INTERVAL_UNITS = ("YEAR", "MONTH", "DAY", "HOUR", "MINUTE", "SECOND")

# sqlglot function classes that map one to one onto a Call of the same arguments, in order.
_FUNCTIONS = {
    exp.Upper: "upper", exp.Lower: "lower", exp.Length: "char_length", exp.Initcap: "initcap",
    exp.Abs: "abs", exp.Floor: "floor", exp.Ceil: "ceil", exp.Sqrt: "sqrt", exp.Ln: "ln", exp.Exp: "exp",
    exp.Nullif: "nullif", exp.CurrentTimestamp: "current_timestamp", exp.CurrentDate: "current_date",
    exp.Localtimestamp: "localtimestamp",
}
# ... and those whose arguments sqlglot names: a Call of the named ones, in this order (any other is refused).
_ARGUMENT_FUNCTIONS = {exp.Substring: ("substring", ("this", "start", "length")),
                       exp.RegexpReplace: ("regexp_replace", ("this", "expression", "replacement")),
                       exp.RegexpExtract: ("regexp_extract", ("this", "expression", "position"))}  # position: group

# Functions sqlglot keeps as Anonymous (Flink names), with their argument counts.
_ANONYMOUS = {
    "PROCTIME": ("proctime", (0,)), "NOW": ("now", (0,)), "DATE_FORMAT": ("date_format", (2,)),
    "TO_TIMESTAMP": ("to_timestamp", (1, 2)), "TO_DATE": ("to_date", (1, 2)),
    "UNIX_TIMESTAMP": ("unix_timestamp", (0, 1, 2)), "FROM_UNIXTIME": ("from_unixtime", (1, 2)),
    "LTRIM": ("ltrim", (1,)), "RTRIM": ("rtrim", (1,)), "REVERSE": ("reverse", (1,)),
    "SPLIT_INDEX": ("split_index", (3,)), "RPAD": ("rpad", (3,)), "LOG10": ("log10", (1,)),
    "CHARACTER_LENGTH": ("char_length", (1,)), "LEFT": ("left", (2,)), "RIGHT": ("right", (2,)),
    "CURRENT_WATERMARK": ("current_watermark", (1,)), "TO_TIMESTAMP_LTZ": ("to_timestamp_ltz", (1, 2)),
}

# Functions written without parentheses that sqlglot reads as column names.
_NILADIC = {"LOCALTIMESTAMP": "localtimestamp", "CURRENT_TIMESTAMP": "current_timestamp",
            "CURRENT_DATE": "current_date"}

# Date parts EXTRACT and YEAR(...) etc. support (Flink's TimeUnit names).
_DATE_PARTS = ("YEAR", "QUARTER", "MONTH", "WEEK", "DAY", "HOUR", "MINUTE", "SECOND", "DOW", "DOY")
_PART_FUNCTIONS = {
    exp.Year: "YEAR", exp.Quarter: "QUARTER", exp.Month: "MONTH", exp.Week: "WEEK", exp.Day: "DAY",
    exp.DayOfMonth: "DAY", exp.Hour: "HOUR", exp.Minute: "MINUTE", exp.Second: "SECOND",
    exp.DayOfWeek: "DOW", exp.DayOfYear: "DOY",
}

_AGGREGATES = {
    exp.Sum: "sum", exp.Avg: "avg", exp.Min: "min", exp.Max: "max", exp.FirstValue: "first_value",
    exp.LastValue: "last_value", exp.StddevPop: "stddev_pop", exp.StddevSamp: "stddev_samp",
    exp.Stddev: "stddev_samp", exp.VariancePop: "var_pop", exp.Variance: "var_samp",
}


class ExpressionTranslator:
    """Translates one expression tree; ``aggregates`` says whether aggregate calls may appear."""

    def __init__(self, scope: Scope, sql: str | None, aggregates: bool) -> None:
        self.scope = scope
        self.sql = sql
        self.aggregates = aggregates

    def __call__(self, node: exp.Expr) -> Expression:
        return self.tr(node)

    def tr(self, node: exp.Expr) -> Expression:
        if isinstance(node, exp.Paren):
            return self.tr(node.this)
        if isinstance(node, exp.Alias):
            return self.tr(node.this)
        if isinstance(node, exp.Column):
            if isinstance(node.this, exp.Star):
                raise unsupported("* in an expression", node, self.sql)
            niladic = _NILADIC.get(node.name.upper())
            if niladic and not node.table and not node.this.quoted:
                return Call(niladic, ())  # LOCALTIMESTAMP and the like take no parentheses
            return column_or_field(self.scope, node, self.sql)
        if isinstance(node, (exp.Literal, exp.Boolean, exp.Null)):
            return literal(node, self.sql)
        if isinstance(node, exp.Func):
            shadowing = user_functions.system_function(node.name if isinstance(node, exp.Anonymous)
                                                       else node.sql_name())
            if shadowing is not None:  # a temporary system function shadows the built-in of its name
                return self._user_call(shadowing, node)
        if isinstance(node, (exp.Add, exp.Sub)) and isinstance(node.expression, exp.Interval):
            return self._plus_interval(node)
        if type(node) in _BINARY:
            return Call(_BINARY[type(node)], (self.tr(node.this), self.tr(node.expression)))
        if isinstance(node, (exp.NullSafeEQ, exp.NullSafeNEQ)):
            # IS [NOT] DISTINCT FROM: NULL equals NULL, and the result is never NULL.
            same = Call("not_distinct", (self.tr(node.this), self.tr(node.expression)))
            return same if isinstance(node, exp.NullSafeEQ) else Call("not", (same,))
        if isinstance(node, exp.Not):
            return self._not(node)
        if isinstance(node, exp.Neg):
            inner = self.tr(node.this)
            if isinstance(inner, Literal) and inner.value is not None and not isinstance(inner.value, bool):
                return Literal(-inner.value, inner.data_type)
            return Call("negate", (inner,))
        if isinstance(node, exp.Is):
            return self._is(node, negated=False)
        if isinstance(node, exp.DPipe):
            return Call("concat", (self.tr(node.this), self.tr(node.expression)))
        if isinstance(node, exp.Like):
            if node.args.get("escape") is not None:
                raise unsupported("LIKE ... ESCAPE", node, self.sql)
            return Call("like", (self.tr(node.this), self.tr(node.expression)))
        if isinstance(node, exp.In):
            if node.args.get("query") is not None or node.args.get("unnest") is not None:
                raise unsupported("IN with a subquery", node, self.sql)
            return Call("in", (self.tr(node.this),) + tuple(self.tr(e) for e in node.expressions))
        if isinstance(node, exp.Between):
            x = self.tr(node.this)
            return Call("and", (Call(">=", (x, self.tr(node.args["low"]))),
                                Call("<=", (x, self.tr(node.args["high"])))))
        if isinstance(node, exp.Case):
            return self._case(node)
        if isinstance(node, exp.If):
            args = [self.tr(node.this), self.tr(node.args["true"])]
            if node.args.get("false") is not None:
                args.append(self.tr(node.args["false"]))
            return Call("case", tuple(args))
        if isinstance(node, exp.TryCast):
            # TRY_CAST gives NULL where CAST would fail, so its type is always nullable.
            return Call("try_cast", (self.tr(node.this), Literal(flink_type(node.args["to"], self.sql, node), None)))
        if isinstance(node, exp.Cast):
            return Call("cast", (self.tr(node.this), Literal(flink_type(node.args["to"], self.sql, node), None)))
        if isinstance(node, exp.Count):
            return self._count(node)
        if type(node) in _AGGREGATES:
            return self._aggregate(node, _AGGREGATES[type(node)], node.this)
        if isinstance(node, exp.Window):
            raise unsupported("window function (OVER) outside the ROW_NUMBER deduplication/Top-N "
                              "pattern", node, self.sql)
        return self._function(node)

    # --- pieces -------------------------------------------------------------------------------
    def _plus_interval(self, node: exp.Add | exp.Sub) -> Expression:
        """``t + INTERVAL 'n' UNIT`` (or ``-``) with a literal count: a date or timestamp shifted."""
        interval = node.expression
        unit = interval.unit.name.upper() if interval.unit is not None else ""
        try:
            count = int(interval.this.name)
        except (AttributeError, ValueError):
            raise unsupported("INTERVAL with a non-integer or compound value", interval, self.sql) from None
        if unit not in _INTERVAL_UNITS:
            raise unsupported(f"INTERVAL unit {unit or '(none)'}", interval, self.sql)
        count = -count if isinstance(node, exp.Sub) else count
        return Call("plus_interval", (self.tr(node.this), Literal(count), Literal(unit)))

    def _not(self, node: exp.Not) -> Expression:
        inner = node.this
        if isinstance(inner, exp.Is):
            return self._is(inner, negated=True)
        return Call("not", (self.tr(inner),))

    def _is(self, node: exp.Is, negated: bool) -> Expression:
        x = self.tr(node.this)
        target = node.expression
        if isinstance(target, exp.Null):
            return Call("is_not_null" if negated else "is_null", (x,))
        if isinstance(target, exp.Boolean):
            name = ("is_not_" if negated else "is_") + ("true" if target.this else "false")
            return Call(name, (x,))
        test = json_functions.is_json_test(node, self.tr, negated)
        if test is not None:
            return test
        raise unsupported("IS with this operand", node, self.sql)

    def _case(self, node: exp.Case) -> Expression:
        subject = self.tr(node.this) if node.this is not None else None
        args: list[Expression] = []
        for branch in node.args["ifs"]:
            condition = self.tr(branch.this)
            if subject is not None:
                condition = Call("==", (subject, condition))
            args += [condition, self.tr(branch.args["true"])]
        if node.args.get("default") is not None:
            args.append(self.tr(node.args["default"]))
        return Call("case", tuple(args))

    def _count(self, node: exp.Count) -> Expression:
        arg = node.this
        if isinstance(arg, exp.Star):
            return self._aggregate(node, "count_star", None)
        if isinstance(arg, exp.Distinct):
            if len(arg.expressions) != 1:
                raise unsupported("COUNT(DISTINCT ...) over several columns", node, self.sql)
            agg = self._aggregate(node, "count", arg.expressions[0])
            return agg.distinct
        if isinstance(arg, exp.Literal) and not arg.is_string:
            return self._aggregate(node, "count_star", None)  # COUNT(1) counts rows, as COUNT(*)
        return self._aggregate(node, "count", arg)

    def _aggregate(self, node: exp.Expr, function: str, arg: exp.Expr | None,
                   separator: str | None = None) -> Agg:
        if not self.aggregates:
            raise SqlError(located(f"aggregate {node.sql()} is not allowed here", node, self.sql))
        distinct = False
        if isinstance(arg, exp.Distinct):
            if len(arg.expressions) != 1:
                raise unsupported("DISTINCT over several arguments", node, self.sql)
            arg, distinct = arg.expressions[0], True
        inner = None
        if arg is not None:
            inner = ExpressionTranslator(self.scope, self.sql, aggregates=False).tr(arg)
        agg = Agg(function, inner, False, separator)
        return agg.distinct if distinct else agg

    def _function(self, node: exp.Expr) -> Expression:
        sql = self.sql
        json_call = json_functions.translate(node, self.tr, flink_type, sql, self._aggregate)
        if json_call is not None:
            return json_call
        if isinstance(node, exp.TimestampDiff):
            unit = node.args["unit"].name.upper() if node.args.get("unit") is not None else ""
            if unit not in _INTERVAL_UNITS:
                raise unsupported(f"TIMESTAMPDIFF unit {unit or '(none)'}", node, sql)
            return Call("timestampdiff", (Literal(unit), self.tr(node.expression), self.tr(node.this)))
        if isinstance(node, (exp.Floor, exp.Ceil)) and node.args.get("to") is not None:
            unit = node.args["to"].name.upper()
            if unit not in _INTERVAL_UNITS or isinstance(node, exp.Ceil):
                raise unsupported(f"{'CEIL' if isinstance(node, exp.Ceil) else 'FLOOR'} TO {unit}", node, sql)
            return Call("floor_to", (self.tr(node.this), Literal(unit)))
        if isinstance(node, exp.Initcap):
            # sqlglot fills in a default delimiter set; Flink's INITCAP takes the string alone.
            return Call("initcap", (self.tr(node.this),))
        if type(node) in _FUNCTIONS:
            args = [a for a in (node.this, *node.expressions, node.args.get("expression")) if a is not None]
            return Call(_FUNCTIONS[type(node)], tuple(self.tr(a) for a in args))
        name, keys = _ARGUMENT_FUNCTIONS.get(type(node), ("", ()))
        if name and all(node.args.get(k) is None or k in keys for k in node.args):
            return Call(name, tuple(self.tr(node.args[k]) for k in keys if node.args.get(k) is not None))
        if type(node) in _PART_FUNCTIONS:
            return Call("extract", (Literal(_PART_FUNCTIONS[type(node)]), self.tr(node.this)))
        if isinstance(node, exp.Extract):
            part = node.this.name.upper()
            if part not in _DATE_PARTS:
                raise unsupported(f"EXTRACT of {part}", node, sql)
            return Call("extract", (Literal(part), self.tr(node.expression)))
        if isinstance(node, exp.Coalesce):
            name = "ifnull" if node.args.get("is_nvl") or node.args.get("is_null") else "coalesce"
            return Call(name, tuple(self.tr(a) for a in (node.this, *node.expressions)))
        if isinstance(node, exp.ConcatWs):
            return Call("concat_ws", tuple(self.tr(a) for a in node.expressions))
        if isinstance(node, exp.Concat):
            return Call("concat", tuple(self.tr(a) for a in node.expressions))
        if isinstance(node, exp.Trim):
            position = (node.args.get("position") or "BOTH").upper()
            chars = node.expression if node.expression is not None else exp.Literal.string(" ")
            return Call("trim", (self.tr(node.this), Literal(position), self.tr(chars)))
        if isinstance(node, exp.StrPosition):
            return Call("position", (self.tr(node.args["substr"]), self.tr(node.this)))
        if isinstance(node, exp.Pad):
            return Call("lpad" if node.args.get("is_left") else "rpad",
                        tuple(self.tr(a) for a in (node.this, node.expression, node.args["fill_pattern"])))
        if isinstance(node, exp.Round):
            args = [node.this] + ([node.args["decimals"]] if node.args.get("decimals") is not None else [])
            return Call("round", tuple(self.tr(a) for a in args))
        if isinstance(node, exp.Pow):
            return Call("power", (self.tr(node.this), self.tr(node.expression)))
        if isinstance(node, exp.Anonymous):
            return self._anonymous(node)
        if isinstance(node, exp.Func) and node.sql_name() == "REPLACE":
            return Call("replace", tuple(self.tr(a) for a in (node.this, node.expression, node.args["replacement"])))
        raise unsupported(_construct_name(node), node, sql)

    def _anonymous(self, node: exp.Anonymous) -> Expression:
        name = node.name.upper()
        args = node.expressions
        if name == "LISTAGG":
            if len(args) not in (1, 2) or (len(args) == 2 and not (isinstance(args[1], exp.Literal)
                                                                  and args[1].is_string)):
                raise unsupported("LISTAGG arguments (expected LISTAGG(x[, 'separator']))", node, self.sql)
            return self._aggregate(node, "listagg", args[0], args[1].this if len(args) == 2 else ",")
        if name == "COLLECT":
            return self._aggregate(node, "collect", args[0] if args else None)
        if name in ("VAR_SAMP", "VAR_POP", "STDDEV_SAMP", "STDDEV_POP") and len(args) == 1:
            return self._aggregate(node, name.lower(), args[0])
        if name not in _ANONYMOUS:
            function = user_functions.lookup(name)
            if function is not None:  # a registered Python function (create_temporary_function)
                return self._user_call(function, node)
            raise unsupported(f"function {name}", node, self.sql)
        function, counts = _ANONYMOUS[name]
        if len(args) not in counts:
            raise SqlError(located(f"{name} takes {' or '.join(map(str, counts))} arguments, got {len(args)}",
                                   node, self.sql))
        return Call(function, tuple(self.tr(a) for a in args))

    def _user_call(self, function: UserFunction, node: exp.Func) -> Expression:
        """A call of a registered user function; its arguments in the order written."""
        if isinstance(node, exp.Anonymous):
            args = list(node.expressions)
        else:
            args = []
            for key in node.arg_types:
                value = node.args.get(key)
                args += value if isinstance(value, list) else [] if value is None else [value]
        return UserCall(function, tuple(self.tr(a) for a in args))


def _construct_name(node: exp.Expr) -> str:
    if isinstance(node, exp.Func):
        return f"function {node.sql_name()}"
    return f"expression {type(node).__name__}"


def contains_aggregate(node: exp.Expr) -> bool:
    """Whether a SQL expression has an aggregate call (outside window functions)."""
    for n in node.walk():
        if isinstance(n, exp.Window):
            continue
        if isinstance(n, (exp.AggFunc, exp.Count)) and not _inside_window(n, node):
            return True
        if isinstance(n, exp.Anonymous) and n.name.upper() in ("LISTAGG", "COLLECT", "VAR_SAMP", "VAR_POP",
                                                               "STDDEV_SAMP", "STDDEV_POP"):
            return True
        if user_functions.is_user_aggregate(n) and not _inside_window(n, node):
            return True
    return False


def _inside_window(n: exp.Expr, root: exp.Expr) -> bool:
    p = n.parent
    while p is not None and p is not root.parent:
        if isinstance(p, exp.Window):
            return True
        p = p.parent
    return False
