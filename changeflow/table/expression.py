"""PyFlink's ``pyflink.table.expression`` module: ``Expression`` and the enums of the JSON functions.

>>> from changeflow.table.expressions import col
>>> str(col("s").json_exists("$.a", JsonExistsOnError.UNKNOWN))
"JSON_EXISTS(s, '$.a' UNKNOWN ON ERROR)"
"""

from __future__ import annotations

from enum import Enum

from changeflow.expressions import Expression

__all__ = ["Expression", "JsonExistsOnError", "JsonOnNull", "JsonQueryOnEmptyOrError", "JsonQueryWrapper",
           "JsonType", "JsonValueOnEmptyOrError"]


class JsonType(Enum):
    """Kinds of JSON for ``is_json()``."""

    VALUE = 0
    SCALAR = 1
    ARRAY = 2
    OBJECT = 3


class JsonExistsOnError(Enum):
    """What ``json_exists()`` gives when the path fails."""

    TRUE = 0
    FALSE = 1
    UNKNOWN = 2
    ERROR = 3


class JsonValueOnEmptyOrError(Enum):
    """What ``json_value()`` gives for an empty result or an error."""

    NULL = 0
    ERROR = 1
    DEFAULT = 2


class JsonQueryWrapper(Enum):
    """Whether and when ``json_query()`` wraps its result in an array."""

    WITHOUT_ARRAY = 0
    CONDITIONAL_ARRAY = 1
    UNCONDITIONAL_ARRAY = 2


class JsonQueryOnEmptyOrError(Enum):
    """What ``json_query()`` gives for an empty result or an error."""

    NULL = 0
    EMPTY_ARRAY = 1
    EMPTY_OBJECT = 2
    ERROR = 3


class JsonOnNull(Enum):
    """How ``json_object()`` / ``json_array()`` treat a NULL value."""

    NULL = 0
    ABSENT = 1
