"""JSON_ARRAYAGG and JSON_OBJECTAGG, Flink 2.3's JSON aggregate functions.

Flink wraps each argument into ``JSON_STRING`` before it aggregates
(WrapJsonAggFunctionArgumentsRule), so its accumulators only ever see JSON
text. changeflow's front ends do the same with ``JSON_ARRAY``, which already
renders a value exactly as Flink's JSON functions do (a nested JSON_OBJECT or
JSON_ARRAY result inserted as JSON, not as a string):

- ``JSON_ARRAYAGG(x [NULL|ABSENT] ON NULL)`` aggregates ``JSON_ARRAY(x [NULL|ABSENT] ON NULL)``,
  a one-element array, or ``[]`` for a NULL left out;
- ``JSON_OBJECTAGG(KEY k VALUE v [NULL|ABSENT] ON NULL)`` aggregates ``JSON_ARRAY(k, v NULL ON NULL)``,
  the key and the value as a pair.

The four function names are Flink's (EXPLAIN prints them as Flink does). As in
Flink, the array keeps arrival order and retracting an item removes its earliest
occurrence; the object's members come out sorted by key, a key twice is an error
with Flink's message, and an empty aggregate is ``[]`` / ``{}``.

Where changeflow differs: Flink's JSON_OBJECTAGG ... NULL ON NULL cannot retract a
member whose value is NULL (its accumulator compares the stored JSON ``null``
with a SQL NULL), so the member stays and the key's next row fails as a
duplicate; changeflow removes it, keeping the streaming result equal to the batch
result. A NULL key is an error naming it (Flink fails with a NullPointerException).
"""

from __future__ import annotations

import json
from collections.abc import Iterable

__all__ = ["JSON_AGGREGATES", "JsonArrayAgg", "JsonObjectAgg", "empty_result", "json_array_of", "json_object_of"]

JSON_AGGREGATES = ("json_arrayagg_absent_on_null", "json_arrayagg_null_on_null",
                   "json_objectagg_null_on_null", "json_objectagg_absent_on_null")

_DECODER = json.JSONDecoder()


def _item(wrapped: str) -> str:
    """The JSON text inside a one-element ``JSON_ARRAY`` (``""`` for ``[]``)."""
    return wrapped[1:-1]


def json_array_of(wrapped: Iterable[str]) -> str:
    """JSON_ARRAYAGG's result over items as their one-element arrays, in order.

    >>> json_array_of(['["a"]', '[]', '[null]', '[{"x":1}]'])
    '["a",null,{"x":1}]'
    """
    return "[" + ",".join(item for item in map(_item, wrapped) if item) + "]"


def _pair(text: str, function: str) -> tuple[str, str]:
    """The key and the member's JSON text (``"key":value``, as rendered) of a ``["key",value]`` pair."""
    key, end = _DECODER.raw_decode(text, 1)
    if key is None:
        raise ValueError(f"{function.upper()}: a key is NULL (the pair {text}); JSON object keys must not be NULL")
    return key, text[1:end] + ":" + text[end + 1:-1]


def _duplicate(key: str) -> ValueError:
    return ValueError(f"Key '{key}' is already present. Duplicate keys are not allowed in JSON_OBJECTAGG. "
                      "Please ensure that keys are unique.")


def json_object_of(pairs: Iterable[str], function: str) -> str:
    """JSON_OBJECTAGG's result over ``["key",value]`` pairs: members sorted by key.

    >>> json_object_of(['["b",1]', '["a",null]'], "json_objectagg_null_on_null")
    '{"a":null,"b":1}'
    >>> json_object_of(['["b",1]', '["a",null]'], "json_objectagg_absent_on_null")
    '{"b":1}'
    """
    acc = JsonObjectAgg(function)
    for pair in pairs:
        acc.accumulate(pair)
    return acc.value()


def empty_result(function: str) -> str:
    """The result of a JSON aggregate over no rows (a global aggregate in batch mode)."""
    return "[]" if function.startswith("json_arrayagg") else "{}"


class JsonArrayAgg:
    """JSON_ARRAYAGG's accumulator: the surviving items (one-element arrays) in arrival order."""

    def __init__(self, values: list | None = None) -> None:
        self.values: list[str] = values if values is not None else []

    def accumulate(self, wrapped: str) -> None:
        if _item(wrapped):  # a NULL left out (ABSENT ON NULL) is not an item
            self.values.append(wrapped)

    def retract(self, wrapped: str) -> None:
        if wrapped in self.values:
            self.values.remove(wrapped)  # the earliest occurrence, as Flink's ListView.remove

    def value(self) -> str:
        return json_array_of(self.values)


class JsonObjectAgg:
    """JSON_OBJECTAGG's accumulator: key -> the pair that set it, in arrival order (state keeps the pairs)."""

    def __init__(self, function: str, values: list | None = None) -> None:
        self.function = function
        self.skip_nulls = function.endswith("absent_on_null")
        self.members: dict[str, tuple[str, str]] = {}  # key -> (pair, member)
        for pair in values or ():
            key, member = _pair(pair, function)
            self.members[key] = (pair, member)

    @property
    def values(self) -> list[str]:
        return [pair for pair, _ in self.members.values()]

    def accumulate(self, pair: str) -> None:
        key, member = _pair(pair, self.function)
        if key in self.members:  # checked before a NULL value is skipped, as Flink does
            raise _duplicate(key)
        if self.skip_nulls and member.endswith(":null"):
            return
        self.members[key] = (pair, member)

    def retract(self, pair: str) -> None:
        key, member = _pair(pair, self.function)
        if key in self.members and self.members[key][1] == member:
            del self.members[key]

    def value(self) -> str:
        return "{" + ",".join(self.members[key][1] for key in sorted(self.members)) + "}"
