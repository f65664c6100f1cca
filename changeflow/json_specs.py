"""The constant clauses of JSON function calls (RETURNING, ON EMPTY/ERROR, wrappers, ON NULL), as specs.

A JSON call (:mod:`changeflow.plan.json_calls` lists them) carries its clauses as one
:class:`~changeflow.expressions.Literal` holding a spec below; both front ends build them
(:func:`changeflow.expressions.json_call`), type inference and the runtime read them.
"""

from __future__ import annotations

from dataclasses import dataclass

from changeflow.common.types import DataType

__all__ = ["RETURNING_TYPES", "JsonArraySpec", "JsonExistsSpec", "JsonObjectSpec", "JsonQuerySpec", "JsonValueSpec",
           "choice"]

# RETURNING types Flink 2.3's code generator accepts for JSON_VALUE (others fail at planning).
RETURNING_TYPES = ("STRING", "VARCHAR", "CHAR", "BOOLEAN", "INT", "DOUBLE")


@dataclass(frozen=True)
class JsonValueSpec:
    path: str
    returning: DataType
    on_empty: str = "NULL"  # NULL | ERROR | DEFAULT
    on_error: str = "NULL"

    def __str__(self) -> str:
        return f"'{self.path}' RETURNING {self.returning.with_nullable(True)} {self.on_empty} ON EMPTY " \
               f"{self.on_error} ON ERROR"


@dataclass(frozen=True)
class JsonQuerySpec:
    path: str
    wrapper: str = "WITHOUT_ARRAY"  # | CONDITIONAL_ARRAY | UNCONDITIONAL_ARRAY
    on_empty: str = "NULL"  # NULL | ERROR | EMPTY_ARRAY | EMPTY_OBJECT
    on_error: str = "NULL"

    def __str__(self) -> str:
        return f"'{self.path}' {self.wrapper} {self.on_empty} ON EMPTY {self.on_error} ON ERROR"


@dataclass(frozen=True)
class JsonExistsSpec:
    path: str
    on_error: str = "FALSE"  # TRUE | FALSE | UNKNOWN | ERROR

    def __str__(self) -> str:
        return f"'{self.path}' {self.on_error} ON ERROR"


@dataclass(frozen=True)
class JsonObjectSpec:
    keys: tuple[str, ...]
    on_null: str = "NULL"  # NULL | ABSENT

    def __str__(self) -> str:
        return f"KEYS({', '.join(self.keys)}) {self.on_null} ON NULL"


@dataclass(frozen=True)
class JsonArraySpec:
    on_null: str = "ABSENT"

    def __str__(self) -> str:
        return f"{self.on_null} ON NULL"


def choice(value: str, allowed: tuple[str, ...], what: str) -> str:
    """``value`` (a string or an enum member: its name) as one of ``allowed``, or ValueError naming ``what``."""
    text = getattr(value, "name", value)
    text = str(text).upper().replace(" ", "_")
    if text not in allowed:
        raise ValueError(f"{what} must be one of {', '.join(allowed)}, got {value!r}")
    return text
