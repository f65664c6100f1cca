"""Flink SQL's JSON functions: their clause syntax (for the sqlglot dialect) and their plan calls.

sqlglot's generic grammar has no ``RETURNING``/``ON EMPTY``/``ON ERROR``/``WRAPPER`` clauses
for these calls, so :data:`FUNCTION_PARSERS` (registered by :mod:`changeflow.sql.dialect`)
reads them into :class:`FlinkJsonValue`, :class:`FlinkJsonQuery`, :class:`FlinkJsonExists`
and :class:`FlinkJsonArray` nodes, in Calcite's grammar:

- ``JSON_VALUE(s, path [RETURNING type] [(NULL|ERROR|DEFAULT x) ON EMPTY] [(...) ON ERROR])``
- ``JSON_QUERY(s, path [WITHOUT [ARRAY] WRAPPER | WITH [CONDITIONAL|UNCONDITIONAL] [ARRAY] WRAPPER]
  [(NULL|ERROR|EMPTY ARRAY|EMPTY OBJECT) ON EMPTY] [(...) ON ERROR])``
- ``JSON_EXISTS(s, path [(TRUE|FALSE|UNKNOWN|ERROR) ON ERROR])``
- ``JSON_ARRAY(v, ... [(NULL|ABSENT) ON NULL])``

- ``JSON_ARRAYAGG(v [(NULL|ABSENT) ON NULL])``

``JSON_OBJECT``, ``JSON_OBJECTAGG`` and ``IS [NOT] JSON [kind]`` come from sqlglot's own grammar.
:func:`translate` turns every one of them into the plan's call (:mod:`changeflow.plan.json_calls`);
the two aggregates become aggregate calls over their argument rendered as JSON text
(:mod:`changeflow.kernels.aggregate.json_aggs`).
"""

from __future__ import annotations

from collections.abc import Callable

from sqlglot import exp
from sqlglot.parser import Parser
from sqlglot.expressions.core import Expression as SqlExpression
from sqlglot.tokenizer_core import TokenType

from changeflow.common.types import DataTypes
from changeflow.expressions import Call, Expression, Literal
from changeflow.plan import json_calls
from changeflow.sql.errors import SqlError, located, unsupported

__all__ = ["FUNCTION_PARSERS", "FlinkJsonArray", "FlinkJsonExists", "FlinkJsonQuery", "FlinkJsonValue",
           "is_json_test", "translate"]


class FlinkJsonValue(SqlExpression, exp.Func):
    _sql_names = ["JSON_VALUE"]
    arg_types = {"this": True, "path": True, "returning": False, "on_empty": False, "empty_default": False,
                 "on_error": False, "error_default": False}


class FlinkJsonQuery(SqlExpression, exp.Func):
    _sql_names = ["JSON_QUERY"]
    arg_types = {"this": True, "path": True, "wrapper": False, "on_empty": False, "on_error": False}


class FlinkJsonExists(SqlExpression, exp.Func):
    _sql_names = ["JSON_EXISTS"]
    arg_types = {"this": True, "path": True, "on_error": False}


class FlinkJsonArray(SqlExpression, exp.Func):
    _sql_names = ["JSON_ARRAY"]
    arg_types = {"expressions": False, "on_null": False}


class FlinkJsonArrayAgg(SqlExpression, exp.AggFunc):
    _sql_names = ["JSON_ARRAYAGG"]
    arg_types = {"this": True, "on_null": False}


# --- parsing (methods of sqlglot's Parser, called with the parser as `self`) -----------------------

def _behaviour(self: Parser, on: str, choices: tuple[str, ...], node: dict) -> bool:
    """``<choice> ON <on>`` or ``DEFAULT <expr> ON <on>``: fill ``node['on_<on>']``; False if absent."""
    index = self._index
    for choice in choices:
        words = choice.split("_")
        if self._match_text_seq(*words, "ON", on):
            node[f"on_{on.lower()}"] = exp.var(choice)
            return True
    if "DEFAULT" in choices and self._match_text_seq("DEFAULT"):
        value = self._parse_bitwise()
        if self._match_text_seq("ON", on):
            node[f"on_{on.lower()}"] = exp.var("DEFAULT")
            node[f"{on.lower()}_default"] = value
            return True
    self._retreat(index)
    return False


def _empty_and_error(self: Parser, node: dict, choices: tuple[str, ...]) -> None:
    # Flink accepts ON EMPTY and ON ERROR in either order.
    for _ in range(2):
        if not (_behaviour(self, "EMPTY", choices, node) or _behaviour(self, "ERROR", choices, node)):
            break


def _text_and_path(self: Parser) -> dict:
    this = self._parse_assignment()
    self._match_text_seq("FORMAT", "JSON")
    if not self._match(TokenType.COMMA):
        self.raise_error("Expecting , and a JSON path")
    return {"this": this, "path": self._parse_bitwise()}


def _parse_json_value(self: Parser) -> exp.Expr:
    node = _text_and_path(self)
    if self._match_text_seq("RETURNING"):
        node["returning"] = self._parse_types()
    _empty_and_error(self, node, ("NULL", "ERROR", "DEFAULT"))
    return self.expression(FlinkJsonValue(**node))


def _parse_json_query(self: Parser) -> exp.Expr:
    node = _text_and_path(self)
    if self._match_text_seq("RETURNING"):
        self.raise_error("JSON_QUERY ... RETURNING is not supported by changeflow (the result is a STRING)")
    if self._match_text_seq("WITHOUT"):
        self._match_text_seq("ARRAY")
        self._match_text_seq("WRAPPER")
        node["wrapper"] = exp.var("WITHOUT_ARRAY")
    elif self._match_text_seq("WITH"):
        kind = "UNCONDITIONAL"
        if self._match_text_seq("CONDITIONAL"):
            kind = "CONDITIONAL"
        else:
            self._match_text_seq("UNCONDITIONAL")
        self._match_text_seq("ARRAY")
        if not self._match_text_seq("WRAPPER"):
            self.raise_error("Expecting WRAPPER")
        node["wrapper"] = exp.var(f"{kind}_ARRAY")
    _empty_and_error(self, node, ("NULL", "ERROR", "EMPTY_ARRAY", "EMPTY_OBJECT"))
    return self.expression(FlinkJsonQuery(**node))


def _parse_json_exists(self: Parser) -> exp.Expr:
    node = _text_and_path(self)
    _behaviour(self, "ERROR", ("TRUE", "FALSE", "UNKNOWN", "ERROR"), node)
    return self.expression(FlinkJsonExists(**node))


def _parse_json_array(self: Parser) -> exp.Expr:
    node: dict = {"expressions": []}
    if not self._match_text_seq("NULL", "ON", "NULL", advance=False) and \
            not self._match_text_seq("ABSENT", "ON", "NULL", advance=False):
        node["expressions"] = self._parse_csv(self._parse_assignment)
    if self._match_text_seq("NULL", "ON", "NULL"):
        node["on_null"] = exp.var("NULL")
    elif self._match_text_seq("ABSENT", "ON", "NULL"):
        node["on_null"] = exp.var("ABSENT")
    return self.expression(FlinkJsonArray(**node))


def _parse_json_arrayagg(self: Parser) -> exp.Expr:
    node: dict = {"this": self._parse_assignment()}
    if self._match(TokenType.ORDER_BY, advance=False):
        self.raise_error("JSON_ARRAYAGG ... ORDER BY is not supported (items keep their arrival order)")
    if self._match_text_seq("NULL", "ON", "NULL"):
        node["on_null"] = exp.var("NULL")
    elif self._match_text_seq("ABSENT", "ON", "NULL"):
        node["on_null"] = exp.var("ABSENT")
    return self.expression(FlinkJsonArrayAgg(**node))


FUNCTION_PARSERS: dict[str, Callable[[Parser], exp.Expr]] = {
    "JSON_VALUE": _parse_json_value, "JSON_QUERY": _parse_json_query, "JSON_EXISTS": _parse_json_exists,
    "JSON_ARRAY": _parse_json_array, "JSON_ARRAYAGG": _parse_json_arrayagg,
}


# --- translation to plan calls ------------------------------------------------------------------

def _word(node: exp.Expr | None, default: str) -> str:
    return default if node is None else node.name.upper()


def _path(node: exp.Expr, function: str, sql: str | None) -> str:
    if not (isinstance(node, exp.Literal) and node.is_string):
        raise SqlError(located(f"{function}'s path must be a string literal", node, sql))
    return node.this


def translate(node: exp.Expr, tr: Callable[[exp.Expr], Expression], flink_type, sql: str | None,
              aggregate: Callable[..., Expression] | None = None) -> Expression | None:
    """The plan call for a JSON function node, or None if ``node`` is not one.

    ``aggregate(node, function, argument)`` builds an aggregate call (JSON_ARRAYAGG, JSON_OBJECTAGG).
    """
    try:
        if isinstance(node, (FlinkJsonArrayAgg, exp.JSONObjectAgg)):
            return _aggregate(node, aggregate, sql)
        return _translate(node, tr, flink_type, sql)
    except NotImplementedError as error:
        raise SqlError(located(str(error), node, sql)) from None
    except ValueError as error:
        if isinstance(error, SqlError):
            raise
        raise SqlError(located(str(error), node, sql)) from None


def _translate(node: exp.Expr, tr, flink_type, sql: str | None) -> Expression | None:
    if isinstance(node, FlinkJsonValue):
        returning = node.args.get("returning")
        return json_calls.json_value(
            tr(node.this), _path(node.args["path"], "JSON_VALUE", sql),
            flink_type(returning, sql, node) if returning is not None else None,
            _word(node.args.get("on_empty"), "NULL"), _default(node.args.get("empty_default"), tr),
            _word(node.args.get("on_error"), "NULL"), _default(node.args.get("error_default"), tr))
    if isinstance(node, FlinkJsonQuery):
        return json_calls.json_query(tr(node.this), _path(node.args["path"], "JSON_QUERY", sql),
                                     _word(node.args.get("wrapper"), "WITHOUT_ARRAY"),
                                     _word(node.args.get("on_empty"), "NULL"), _word(node.args.get("on_error"), "NULL"))
    if isinstance(node, FlinkJsonExists):
        return json_calls.json_exists(tr(node.this), _path(node.args["path"], "JSON_EXISTS", sql),
                                      _word(node.args.get("on_error"), "FALSE"))
    if isinstance(node, FlinkJsonArray):
        return json_calls.json_array([_value(v, tr) for v in node.expressions], _word(node.args.get("on_null"),
                                                                                       "ABSENT"))
    if isinstance(node, exp.JSONObject):
        if node.args.get("unique_keys") is not None or node.args.get("return_type") or node.args.get("encoding"):
            raise unsupported("JSON_OBJECT with WITH/WITHOUT UNIQUE KEYS, RETURNING or ENCODING", node, sql)
        pairs = []
        for pair in node.expressions:
            if not isinstance(pair, exp.JSONKeyValue):
                raise unsupported(f"JSON_OBJECT entry {pair.sql()}", pair, sql)
            key = pair.this
            if not (isinstance(key, exp.Literal) and key.is_string):
                raise SqlError(located("JSON_OBJECT keys must be non-NULL string literals", pair, sql))
            pairs.append((key.this, _value(pair.expression, tr)))
        handling = node.args.get("null_handling") or "NULL ON NULL"
        return json_calls.json_object(pairs, str(handling).split()[0])
    if isinstance(node, exp.Anonymous) and node.name.upper() == "JSON_STRING":
        if len(node.expressions) != 1:
            raise SqlError(located("JSON_STRING takes 1 argument", node, sql))
        return json_calls.json_string(tr(node.expressions[0]))
    if isinstance(node, exp.Anonymous) and node.name.upper() == "JSON":
        raise SqlError(located("The JSON function can only be used as a value of JSON_OBJECT or JSON_ARRAY",
                               node, sql))
    return None


def _aggregate(node: exp.Expr, aggregate: Callable[..., Expression] | None, sql: str | None) -> Expression:
    """JSON_ARRAYAGG / JSON_OBJECTAGG over their argument as JSON text (a JSON_ARRAY, see kernels' json_aggs).

    Their SQL type is Calcite's VARCHAR(2000) NOT NULL; the Table API's functions give STRING NOT NULL.
    """
    if aggregate is None:
        raise SqlError(located(f"aggregate {node.sql()} is not allowed here", node, sql))
    return Call("cast", (_json_aggregate(node, aggregate, sql), Literal(DataTypes.VARCHAR(2000, nullable=False),
                                                                         None)))


def _json_aggregate(node: exp.Expr, aggregate: Callable[..., Expression], sql: str | None) -> Expression:
    if isinstance(node, FlinkJsonArrayAgg):
        on_null = _word(node.args.get("on_null"), "ABSENT")
        item = FlinkJsonArray(expressions=[node.this], on_null=exp.var(on_null))
        return aggregate(node, f"json_arrayagg_{on_null.lower()}_on_null", item)
    if node.args.get("return_type") or node.args.get("encoding") or len(node.expressions) != 1:
        raise unsupported("JSON_OBJECTAGG with RETURNING, ENCODING or several KEY ... VALUE entries", node, sql)
    entry = node.expressions[0]
    if not isinstance(entry, exp.JSONKeyValue):
        raise unsupported(f"JSON_OBJECTAGG entry {entry.sql()}", entry, sql)
    on_null = str(node.args.get("null_handling") or "NULL ON NULL").split()[0].upper()
    pair = FlinkJsonArray(expressions=[entry.this, entry.expression], on_null=exp.var("NULL"))
    return aggregate(node, f"json_objectagg_{on_null.lower()}_on_null", pair)


def _default(node: exp.Expr | None, tr) -> Expression | None:
    return None if node is None else tr(node)


def _value(node: exp.Expr, tr) -> Expression:
    """A JSON_OBJECT / JSON_ARRAY value: ``JSON(text)`` is inserted as JSON, anything else translated."""
    if isinstance(node, exp.Anonymous) and node.name.upper() == "JSON" and len(node.expressions) == 1:
        return json_calls.json_text(tr(node.expressions[0]))
    return tr(node)


def is_json_test(node: exp.Is, tr, negated: bool) -> Expression | None:
    """``x IS [NOT] JSON [VALUE|SCALAR|ARRAY|OBJECT]``, or None if ``node`` tests something else."""
    target = node.expression
    if not isinstance(target, exp.JSON):
        return None
    # sqlglot keeps the kind as text ("OBJECT"), or False / None when there is none
    kind = target.this.name if isinstance(target.this, exp.Expr) else target.this
    kind = str(kind).upper() if kind else "VALUE"
    test = json_calls.is_json(tr(node.this), kind)
    return Call("not", (test,)) if negated else test

