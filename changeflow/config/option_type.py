"""One configuration key's declaration (:class:`ConfigOption`): its type, default and accepted values, and
how a value, or its string form, is parsed and written as Flink does."""

from __future__ import annotations

import dataclasses
import datetime
import enum
import math
import os
import re
from typing import Any

from changeflow.config.durations import format_duration, parse_duration
from changeflow.config.memory_size import format_memory_size, parse_memory_size

__all__ = ["ConfigOption", "OptionType", "to_config_string"]

_INT_RANGE = (-(2**31), 2**31 - 1)  # Flink's intType is a Java int
_LONG_RANGE = (-(2**63), 2**63 - 1)  # Flink's longType is a Java long
_INTEGER_TEXT = re.compile(r"[+-]?[0-9]+")


class OptionType(enum.Enum):
    """The type of an option's value, and the Python type ``Configuration.get`` returns."""

    BOOLEAN = "boolean"  # bool
    INT = "int"  # int, within a Java int as in Flink's intType
    LONG = "long"  # int, within a Java long
    FLOAT = "float"  # float (Flink's doubleType)
    STRING = "string"  # str
    DURATION = "duration"  # datetime.timedelta
    ENUM = "enum"  # str: one of the option's allowed_values, spelt as registered
    MEMORY_SIZE = "memory-size"  # int: a number of bytes


class _BadValue(Exception):
    """A value an option cannot take; ``ConfigOption.parse`` turns it into a ValueError."""

    def __init__(self, detail: str | None = None):
        super().__init__(detail)
        self.detail = detail


@dataclasses.dataclass(frozen=True)
class ConfigOption:
    """One configuration key: its type, default, description and accepted values.

    ``default`` may be written as the value or as its string form (``"0 ms"``); it is parsed
    once here. ``None`` means the option has no default. ``fallback_keys`` are other spellings
    of the key (deprecated or alias names); a value set under one is stored under ``key``.

    >>> opt = ConfigOption("changeflow.example.mode", OptionType.ENUM, "FAST",
    ...                    allowed_values=("FAST", "SAFE"))
    >>> opt.parse("safe")
    'SAFE'
    >>> opt.parse("quick")
    Traceback (most recent call last):
    ...
    ValueError: Invalid value 'quick' for configuration key 'changeflow.example.mode':
    expected one of FAST, SAFE (case-insensitive).
    """

    key: str
    type: OptionType
    default: Any = None
    description: str = ""
    allowed_values: tuple[str, ...] = ()
    fallback_keys: tuple[str, ...] = ()
    min_value: int | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.type, OptionType):
            raise TypeError(f"option {self.key!r}: type must be an OptionType, got {self.type!r}")
        for key in (self.key, *self.fallback_keys):
            if not isinstance(key, str) or not key.strip():
                raise ValueError(f"invalid configuration key {key!r}")
        object.__setattr__(self, "allowed_values", tuple(self.allowed_values))
        object.__setattr__(self, "fallback_keys", tuple(self.fallback_keys))
        if (self.type is OptionType.ENUM) != bool(self.allowed_values):
            raise ValueError(
                f"option {self.key!r}: allowed_values are required for an enum option "
                f"and only for one"
            )
        if self.min_value is not None and self.type not in (OptionType.INT, OptionType.LONG):
            raise ValueError(f"option {self.key!r}: min_value applies to integer options only")
        if self.default is not None:
            object.__setattr__(self, "default", self.parse(self.default))

    @property
    def has_default(self) -> bool:
        return self.default is not None

    def expected(self) -> str:
        """What the option accepts, in words, for error messages and docs.

        >>> ConfigOption("changeflow.example.flag", OptionType.BOOLEAN, False).expected()
        'a boolean: true or false (case-insensitive)'
        """
        if self.type is OptionType.BOOLEAN:
            return "a boolean: true or false (case-insensitive)"
        if self.type in (OptionType.INT, OptionType.LONG):
            low, high = _INT_RANGE if self.type is OptionType.INT else _LONG_RANGE
            if self.min_value is not None:
                return f"an integer from {self.min_value} to {high}"
            return f"an integer (from {low} to {high})"
        if self.type is OptionType.FLOAT:
            return "a finite number"
        if self.type is OptionType.STRING:
            return "a string"
        if self.type is OptionType.DURATION:
            return (
                "a duration: a whole number followed by an optional unit, "
                "e.g. '5 s', '2 min' or '500 ms' (no unit means milliseconds)"
            )
        if self.type is OptionType.ENUM:
            return f"one of {', '.join(self.allowed_values)} (case-insensitive)"
        return "a memory size: a whole number followed by an optional unit, e.g. '64 mb'"

    def parse(self, value: Any) -> Any:
        """Turn a value, or its string form, into the option's typed value.

        Raises ``ValueError`` naming the key, the value and what the option accepts.
        """
        if value is None:
            raise ValueError(
                f"Configuration key {self.key!r} cannot be set to None; to unset it, "
                f"remove it (Configuration.remove_config)"
            )
        try:
            result = _PARSERS[self.type](self, value)
        except _BadValue as bad:
            detail = bad.detail or f"expected {self.expected()}."
            raise ValueError(
                f"Invalid value {value!r} for configuration key {self.key!r}: {detail}"
            ) from None
        if self.min_value is not None and result < self.min_value:
            raise ValueError(
                f"Invalid value {value!r} for configuration key {self.key!r}: "
                f"expected {self.expected()}."
            )
        return result

    def format(self, value: Any) -> str:
        """The string form of a typed value, as ``Configuration.get_string`` returns it.

        >>> ConfigOption("changeflow.example.latency", OptionType.DURATION).format(datetime.timedelta(seconds=5))
        '5 s'
        """
        value = self.parse(value)
        if self.type is OptionType.MEMORY_SIZE:
            return format_memory_size(value)
        return to_config_string(value)


# ----------------------------------------------------------------------------------------
#  Value parsers, one per type. Each takes a typed value or its string form.
# ----------------------------------------------------------------------------------------


def _parse_boolean(option: ConfigOption, value: Any) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str):
        # Flink accepts exactly true/false in any case; "yes", "1" and "on" are errors.
        text = value.strip().lower()
        if text in ("true", "false"):
            return text == "true"
    raise _BadValue()


def _parse_integer(option: ConfigOption, value: Any) -> int:
    # bool is an int subclass in Python; True for a size is a mistake, not 1.
    if isinstance(value, bool):
        raise _BadValue()
    if isinstance(value, int):
        number = value
    elif isinstance(value, str) and _INTEGER_TEXT.fullmatch(value.strip()):
        number = int(value.strip())
    else:
        raise _BadValue()
    low, high = _INT_RANGE if option.type is OptionType.INT else _LONG_RANGE
    if not low <= number <= high:
        raise _BadValue()
    return number


def _parse_float(option: ConfigOption, value: Any) -> float:
    if isinstance(value, bool):
        raise _BadValue()
    if isinstance(value, (int, float)):
        number = float(value)
    elif isinstance(value, str) and "_" not in value:
        try:
            number = float(value.strip())
        except ValueError:
            raise _BadValue() from None
    else:
        raise _BadValue()
    if not math.isfinite(number):
        raise _BadValue()
    return number


def _parse_string(option: ConfigOption, value: Any) -> str:
    return to_config_string(value)


def _parse_duration(option: ConfigOption, value: Any) -> datetime.timedelta:
    if isinstance(value, bool):
        raise _BadValue()
    if isinstance(value, datetime.timedelta):
        duration = value
    elif isinstance(value, int):
        # Flink reads a bare number as milliseconds, whether written as text or as a number.
        duration = datetime.timedelta(milliseconds=value)
    elif isinstance(value, str):
        try:
            return parse_duration(value)
        except ValueError as error:
            raise _BadValue(f"{error}.") from None
    else:
        raise _BadValue()
    if duration < datetime.timedelta(0):
        raise _BadValue(f"a duration cannot be negative; expected {option.expected()}.")
    return duration


def _parse_enum(option: ConfigOption, value: Any) -> str:
    # Accept any Python enum member by name, so RuntimeExecutionMode.BATCH works as "BATCH".
    text = value.name if isinstance(value, enum.Enum) else value
    if isinstance(text, str):
        wanted = text.strip().upper()
        for allowed in option.allowed_values:
            if allowed.upper() == wanted:
                return allowed
    raise _BadValue()


def _parse_memory_size(option: ConfigOption, value: Any) -> int:
    if isinstance(value, bool):
        raise _BadValue()
    if isinstance(value, int):
        if value < 0:
            raise _BadValue(f"a memory size cannot be negative; expected {option.expected()}.")
        return value
    if isinstance(value, str):
        try:
            return parse_memory_size(value)
        except ValueError as error:
            raise _BadValue(f"{error}.") from None
    raise _BadValue()


_PARSERS = {
    OptionType.BOOLEAN: _parse_boolean,
    OptionType.INT: _parse_integer,
    OptionType.LONG: _parse_integer,
    OptionType.FLOAT: _parse_float,
    OptionType.STRING: _parse_string,
    OptionType.DURATION: _parse_duration,
    OptionType.ENUM: _parse_enum,
    OptionType.MEMORY_SIZE: _parse_memory_size,
}


def to_config_string(value: Any) -> str:
    """Write a Python value the way Flink writes configuration values.

    Booleans are lower case, durations use Flink's units, enum members their name.

    >>> to_config_string(True), to_config_string(datetime.timedelta(minutes=2))
    ('true', '2 min')
    """
    if value is None:
        raise ValueError("a configuration value cannot be None")
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, datetime.timedelta):
        return format_duration(value)
    if isinstance(value, enum.Enum):
        return value.name
    if isinstance(value, os.PathLike):
        return os.fspath(value)
    return str(value)
