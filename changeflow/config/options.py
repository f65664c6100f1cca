"""The registry of configuration keys changeflow knows: Flink's names, types and defaults.

Each key is a ``ConfigOption``: its type, its default, a description and, for an enum, the
accepted values. ``register`` adds one, so any module can declare the options it reads::

    MY_OPTION = register(ConfigOption("changeflow.my-module.thing", OptionType.INT, default=3,
                                      description="..."))

Register at import time of the module that reads the option.

How keys are treated when set:

- A key registered here (or one of its fallback spellings) has its value parsed and checked
  when it is set; a bad value raises ``ValueError`` naming the key, the value and what is
  accepted.
- A real Flink key changeflow does not register (:mod:`changeflow.config.flink_keys`) is
  accepted and ignored when it cannot change results (``pipeline.auto-watermark-interval``,
  ``taskmanager.*``, ``state.backend.type`` ...); one that would change results
  (``table.local-time-zone``) is refused unless set to Flink's default.
- An unknown key under ``table.``, ``execution.``, ``parallelism.``, ``pipeline.`` or
  ``changeflow.`` raises ``ValueError`` with the closest known keys. Flink accepts a misspelt
  key and silently ignores it; changeflow does not.
- A key under ``spark.`` is passed through to Spark as a string, unvalidated: Spark owns it.
- Any other key that looks like a misspelling of a known key (one or two edits away, or its
  tail, as ``mini-batch.enabled``) raises ``ValueError`` with a "did you mean"; the rest are
  accepted and kept as strings, so user- and connector-defined keys work.

>>> lookup("table.exec.mini-batch.size").default
-1
>>> TABLE_EXEC_MINI_BATCH_ALLOW_LATENCY.parse("5 s")
datetime.timedelta(seconds=5)
>>> lookup("table.exec.sink.upsert-materialize.strategy").key
'table.exec.sink.upsert-materialize-strategy.type'
"""

from __future__ import annotations

import dataclasses
import datetime
import difflib
import enum
import functools
import math
import os
import re
from typing import Any, Protocol

from changeflow.config.durations import format_duration, parse_duration
from changeflow.config.flink_keys import FlinkKey, flink_key, known_spellings

__all__ = [
    "CHANGEFLOW_CHECKPOINT_DIR",
    "CHANGEFLOW_SOURCE_ROWS_PER_BATCH",
    "CHANGEFLOW_SPARK_MASTER",
    "CHANGEFLOW_STATE_BUCKETS",
    "EXECUTION_FLUSH_MEMORY_BUFFER_MAX_ENTRIES",
    "EXECUTION_FLUSH_MEMORY_BUFFER_ONLY",
    "EXECUTION_MAX_FLUSH_INTERVAL",
    "EXECUTION_RUNTIME_MODE",
    "PARALLELISM_DEFAULT",
    "PASS_THROUGH_PREFIX",
    "TABLE_EXEC_MINI_BATCH_ALLOW_LATENCY",
    "TABLE_EXEC_MINI_BATCH_ENABLED",
    "TABLE_EXEC_MINI_BATCH_SIZE",
    "TABLE_EXEC_SINK_REQUIRE_ON_CONFLICT",
    "TABLE_EXEC_SINK_UPSERT_MATERIALIZE",
    "TABLE_EXEC_SINK_UPSERT_MATERIALIZE_STRATEGY_ADAPTIVE_THRESHOLD_HIGH",
    "TABLE_EXEC_SINK_UPSERT_MATERIALIZE_STRATEGY_ADAPTIVE_THRESHOLD_LOW",
    "TABLE_EXEC_SINK_UPSERT_MATERIALIZE_STRATEGY_TYPE",
    "TABLE_EXEC_STATE_TTL",
    "TABLE_OPTIMIZER_AGG_PHASE_STRATEGY",
    "VALIDATED_PREFIXES",
    "ConfigOption",
    "OptionType",
    "canonical_key",
    "check_key",
    "format_memory_size",
    "is_validated_key",
    "lookup",
    "misspelling_of",
    "parse_memory_size",
    "register",
    "registered_options",
    "suggest_keys",
    "to_config_string",
    "validate_mini_batch",
]

VALIDATED_PREFIXES = ("table.", "execution.", "parallelism.", "pipeline.", "changeflow.")
"""Keys under these prefixes must be registered; an unknown one is an error."""

PASS_THROUGH_PREFIX = "spark."
"""Keys under this prefix go to Spark as strings; changeflow does not check them."""

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
    ValueError: Invalid value 'quick' for configuration key 'changeflow.example.mode': expected one of FAST, SAFE (case-insensitive).
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

        >>> TABLE_EXEC_MINI_BATCH_ENABLED.expected()
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

        >>> TABLE_EXEC_MINI_BATCH_ALLOW_LATENCY.format(datetime.timedelta(seconds=5))
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


# ----------------------------------------------------------------------------------------
#  Memory sizes, as Flink's MemorySize.parse reads them ("64 mb", "1g", "512").
# ----------------------------------------------------------------------------------------

_MEMORY_UNITS: dict[str, tuple[tuple[str, ...], int]] = {
    "BYTES": (("b", "bytes"), 1),
    "KILO_BYTES": (("k", "kb", "kibibytes"), 1 << 10),
    "MEGA_BYTES": (("m", "mb", "mebibytes"), 1 << 20),
    "GIGA_BYTES": (("g", "gb", "gibibytes"), 1 << 30),
    "TERA_BYTES": (("t", "tb", "tebibytes"), 1 << 40),
}
_BYTES_BY_LABEL = {label: size for labels, size in _MEMORY_UNITS.values() for label in labels}
_MEMORY_UNITS_TEXT = ", ".join(
    f"{name}: ({' | '.join(labels)})" for name, (labels, _) in _MEMORY_UNITS.items()
)


def parse_memory_size(text: str) -> int:
    """Parse a Flink memory size (``"64 mb"``, ``"1g"``, ``"512"``) to a number of bytes.

    Units are powers of 1024 and case-insensitive; no unit means bytes.

    >>> parse_memory_size("64 kb")
    65536
    """
    trimmed = text.strip()
    number = re.match(r"[0-9]*", trimmed).group()
    label = trimmed[len(number) :].strip().lower()
    problem = None
    if not number:
        problem = "it does not start with a number"
    elif label and label not in _BYTES_BY_LABEL:
        problem = f"unit {label!r} is not a known memory unit"
    if problem:
        raise ValueError(
            f"Cannot parse memory size {text!r}: {problem}. Expected a whole number followed "
            f"by an optional unit (no unit means bytes); accepted units (case-insensitive): "
            f"{_MEMORY_UNITS_TEXT}"
        )
    size = int(number) * _BYTES_BY_LABEL.get(label, 1)
    if size > _LONG_RANGE[1]:
        raise ValueError(f"Cannot parse memory size {text!r}: it exceeds {_LONG_RANGE[1]} bytes")
    return size


def format_memory_size(size: int) -> str:
    """Write a byte count in the largest unit that holds it exactly, as Flink does.

    >>> format_memory_size(65536), format_memory_size(1000)
    ('64 kb', '1000 bytes')
    """
    for labels, unit in reversed(_MEMORY_UNITS.values()):
        if size % unit == 0 and size:
            return f"{size // unit} {labels[1]}"
    return f"{size} bytes"


# ----------------------------------------------------------------------------------------
#  The registry.
# ----------------------------------------------------------------------------------------

# Every registered spelling (primary and fallback keys) -> its option.
_BY_KEY: dict[str, ConfigOption] = {}


def register(option: ConfigOption) -> ConfigOption:
    """Add an option to the registry and return it, so a module can write
    ``MY_OPTION = register(ConfigOption(...))``.

    Registering an equal option again is a no-op (modules may be re-imported); a different
    option under a key or fallback key already taken raises ``ValueError``.
    """
    if not isinstance(option, ConfigOption):
        raise TypeError(f"register() takes a ConfigOption, got {type(option).__name__}")
    spellings = (option.key, *option.fallback_keys)
    for key in spellings:
        if key != key.lower() or any(ch.isspace() for ch in key):
            # Suggestions for misspelt keys compare lower-cased text against these keys.
            raise ValueError(f"cannot register {key!r}: keys are lower case without spaces")
        if key.startswith(PASS_THROUGH_PREFIX):
            raise ValueError(
                f"cannot register {key!r}: keys under {PASS_THROUGH_PREFIX!r} belong to Spark "
                f"and pass through unvalidated"
            )
        existing = _BY_KEY.get(key)
        if existing is not None and existing != option:
            raise ValueError(
                f"cannot register {option.key!r}: key {key!r} is already registered "
                f"for option {existing.key!r}"
            )
    for key in spellings:
        _BY_KEY[key] = option
    return option


def lookup(key: str) -> ConfigOption | None:
    """The option registered under a key or one of its fallback keys, or None."""
    return _BY_KEY.get(key)


def registered_options() -> list[ConfigOption]:
    """Every registered option once, sorted by key."""
    unique = {option.key: option for option in _BY_KEY.values()}
    return [unique[key] for key in sorted(unique)]


def canonical_key(key: str) -> str:
    """The primary key for a registered spelling; any other key unchanged."""
    option = _BY_KEY.get(key)
    return option.key if option is not None else key


def is_validated_key(key: str) -> bool:
    """True if the key falls under a prefix whose keys must be registered.

    The check ignores case and surrounding spaces, so ``"Table.Exec.Foo"`` is caught as an
    unknown key rather than kept as a stray string that nothing reads.
    """
    return key.strip().lower().startswith(VALIDATED_PREFIXES)


def suggest_keys(key: str, limit: int = 3) -> list[str]:
    """The registered keys closest to a (misspelt) key, best first."""
    candidates = {spelling: option.key for spelling, option in _BY_KEY.items()}
    matches = difflib.get_close_matches(key.strip().lower(), candidates, n=limit * 2, cutoff=0.6)
    suggestions: list[str] = []
    for match in matches:
        primary = candidates[match]
        if primary not in suggestions:
            suggestions.append(primary)
    return suggestions[:limit]


_NO_VALUE = object()


def check_key(key: str, value: Any = _NO_VALUE) -> ConfigOption | None:
    """The option for a key about to be set (to ``value``) or read; None for a free (unvalidated) key.

    Raises ``ValueError``, naming the key and the closest known keys, for

    - an unknown key under a validated prefix (``table.``, ``execution.`` ...);
    - a key that is not known but looks like a misspelling of a known one: within one or two
      edits of it (``tabel.exec.mini-batch.enabled``) or its tail (``mini-batch.enabled``
      for ``table.exec.mini-batch.enabled``);
    - a real Flink key that changeflow does not implement, set to a value other than Flink's
      default (:mod:`changeflow.config.flink_keys`).

    Flink's other real keys (``pipeline.*``, ``state.*``, ``taskmanager.*``, ``rest.*``,
    ``python.*`` ...) are accepted and ignored; ``spark.`` keys pass through unchecked.
    """
    if not isinstance(key, str):
        raise TypeError(f"a configuration key must be a string, got {type(key).__name__}")
    option = _BY_KEY.get(key)
    if option is not None:
        return option
    entry = flink_key(key)
    if entry is not None:
        if value is not _NO_VALUE and not entry.accepts(value):
            raise _unsupported_key_error(key, value, entry)
        # A Flink-only namespace is accepted whole (its keys are not all listed, so no guessing
        # at misspellings there), but the tail of a key changeflow implements is a slip:
        # "state.ttl" meant "table.exec.state.ttl".
        meant = [] if entry.listed else misspelling_of(key, registered_only=True)
        if meant:
            raise _misspelt_key_error(key, meant)
        return None
    if is_validated_key(key):
        # A close Flink key changeflow ignores is as good a guess as a registered one.
        suggestions = misspelling_of(key) or suggest_keys(key)
        if suggestions:
            hint = _did_you_mean(suggestions)
        else:
            prefix = key.strip().lower().split(".", 1)[0] + "."
            same_prefix = [o.key for o in registered_options() if o.key.startswith(prefix)]
            if same_prefix:
                hint = f"Known keys under {prefix!r}: {', '.join(same_prefix)}."
            else:
                hint = f"changeflow knows no key under {prefix!r}."
        raise _unknown_key_error(key, hint)
    if key.strip().lower().startswith(PASS_THROUGH_PREFIX):
        return None
    meant = misspelling_of(key)
    if meant:
        raise _misspelt_key_error(key, meant)
    return None


def _misspelt_key_error(key: str, meant: list[str]) -> ValueError:
    return ValueError(
        f"Unknown configuration key {key!r}, which looks like a misspelling of a known key. "
        f"{_did_you_mean(meant)} changeflow rejects keys that are one or two edits away from, "
        f"or the tail of, a Flink, Spark or changeflow key (Flink would silently ignore them)."
    )


def _did_you_mean(suggestions: list[str]) -> str:
    hint = f"Did you mean {suggestions[0]!r}?"
    if len(suggestions) > 1:
        hint += f" Other close keys: {', '.join(repr(s) for s in suggestions[1:])}."
    return hint


def _unsupported_key_error(key: str, value: Any, entry: FlinkKey) -> ValueError:
    accepted = (f"only Flink's default {entry.default!r} is accepted" if entry.default is not None
                else "changeflow accepts no value for it")
    note = f" {entry.note[0].upper()}{entry.note[1:]}." if entry.note else ""
    return ValueError(
        f"Configuration key {key!r} is a Flink key changeflow does not implement: ignoring it "
        f"when set to {value!r} would change what the job computes or keeps, so it is refused "
        f"({accepted}).{note}"
    )


def _allowed_edits(length: int) -> int:
    # Short keys are too close to ordinary words ("rest.port" / "test.port") to guess at.
    if length < 10:
        return 0
    return 1 if length < 20 else 2


def _edit_distance(a: str, b: str, limit: int) -> int:
    """Optimal string alignment distance (a transposition is one edit), or ``limit + 1`` if above it."""
    if abs(len(a) - len(b)) > limit:
        return limit + 1
    previous2: list[int] = []
    previous = list(range(len(b) + 1))
    for i in range(1, len(a) + 1):
        current = [i] + [0] * len(b)
        for j in range(1, len(b) + 1):
            cost = 0 if a[i - 1] == b[j - 1] else 1
            current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                current[j] = min(current[j], previous2[j - 2] + 1)
        if min(current) > limit:
            return limit + 1
        previous2, previous = previous, current
    return previous[-1]


def misspelling_of(key: str, limit: int = 3, registered_only: bool = False) -> list[str]:
    """The known keys (registered, Flink's, common Spark ones) that ``key`` looks like a misspelling of.

    A key is taken for a misspelling of a known key when it is within one edit of it (two for
    keys of 20 characters or more; keys under 10 characters are never guessed at), or when it
    is its tail: its last dot-separated parts (``mini-batch.enabled``, ``state.ttl``), or its
    last part alone if that is a hyphenated name (``max-flush-interval``). Closest first; empty
    for a key that is known or looks like nothing known. With ``registered_only``, only the
    tails of the keys changeflow registers count.

    >>> misspelling_of("tabel.exec.mini-batch.enabled")
    ['table.exec.mini-batch.enabled']
    >>> misspelling_of("mini-batch.enabled")
    ['table.exec.mini-batch.enabled']
    >>> misspelling_of("my.app.threshold")
    []
    """
    return list(_misspelling_of(key.strip().lower(), limit, registered_only, (id(_BY_KEY), len(_BY_KEY))))


@functools.lru_cache(maxsize=256)
def _misspelling_of(text: str, limit: int, registered_only: bool, registry: tuple) -> tuple[str, ...]:
    # Cached: Configuration.get checks a free key on every read. The registry's identity and
    # size are part of the cache key, so registering an option invalidates earlier answers.
    candidates = {spelling: option.key for spelling, option in _BY_KEY.items()}
    if not registered_only:
        for spelling in known_spellings():
            candidates.setdefault(spelling, spelling)
    if text in candidates:
        return ()
    ranked: dict[str, tuple[int, int]] = {}
    allowed = 0 if registered_only else _allowed_edits(len(text))
    for spelling, primary in candidates.items():
        if allowed:
            distance = _edit_distance(text, spelling, allowed)
            if distance <= allowed:
                rank = (0, distance)
                ranked[primary] = min(ranked.get(primary, rank), rank)
                continue
        tail_worthy = "." in text or "-" in text
        if tail_worthy and spelling.endswith("." + text):
            rank = (1, len(spelling) - len(text))
            ranked[primary] = min(ranked.get(primary, rank), rank)
    return tuple(sorted(ranked, key=lambda k: (ranked[k], k))[:limit])


_PREFIXES_TEXT = (
    ", ".join(repr(p) for p in VALIDATED_PREFIXES[:-1]) + f" and {VALIDATED_PREFIXES[-1]!r}"
)


def _unknown_key_error(key: str, hint: str) -> ValueError:
    return ValueError(
        f"Unknown configuration key {key!r}. {hint} changeflow rejects unknown keys under "
        f"{_PREFIXES_TEXT} (Flink would silently ignore them); keys under "
        f"{PASS_THROUGH_PREFIX!r} go to Spark unchecked."
    )


# ----------------------------------------------------------------------------------------
#  Flink's keys. Defaults are Flink 2.3's; descriptions say what the key does in changeflow.
# ----------------------------------------------------------------------------------------

PIPELINE_NAME = register(
    ConfigOption(
        "pipeline.name",
        OptionType.STRING,
        None,
        description=(
            "The job name. With changeflow.checkpoint-dir set, a streaming INSERT job or a "
            "DataStream execute() keeps its checkpoint under this name and resumes from it "
            "when run again. Unset: an INSERT job is named insert-into_<sink>, as in Flink."
        ),
    )
)

EXECUTION_RUNTIME_MODE = register(
    ConfigOption(
        "execution.runtime-mode",
        OptionType.ENUM,
        "STREAMING",
        allowed_values=("STREAMING", "BATCH", "AUTOMATIC"),
        description=(
            "How a DataStream program runs. STREAMING processes input incrementally and "
            "emits a changelog (Spark Structured Streaming); BATCH runs over bounded input "
            "only and emits final results (Spark batch); AUTOMATIC picks BATCH when every "
            "source is bounded and STREAMING otherwise."
        ),
    )
)

PARALLELISM_DEFAULT = register(
    ConfigOption(
        "parallelism.default",
        OptionType.INT,
        1,
        description="The default parallelism of jobs (Flink's parallelism.default).",
    )
)

TABLE_EXEC_MINI_BATCH_ENABLED = register(
    ConfigOption(
        "table.exec.mini-batch.enabled",
        OptionType.BOOLEAN,
        False,
        description=(
            "Whether stateful operators buffer input and fold it per key before touching "
            "state (mini-batch): one state read and write per key per bundle and fewer output "
            "changes, at the cost of latency. Off by default. When on, "
            "table.exec.mini-batch.allow-latency and table.exec.mini-batch.size must both be "
            "positive."
        ),
    )
)

TABLE_EXEC_MINI_BATCH_ALLOW_LATENCY = register(
    ConfigOption(
        "table.exec.mini-batch.allow-latency",
        OptionType.DURATION,
        "0 ms",
        description=(
            "The longest time a mini-batch may buffer input before it is processed. A bundle "
            "ends when this time has passed or when table.exec.mini-batch.size records are "
            "buffered, whichever comes first. Must be greater than zero when mini-batch is "
            "enabled."
        ),
    )
)

TABLE_EXEC_MINI_BATCH_SIZE = register(
    ConfigOption(
        "table.exec.mini-batch.size",
        OptionType.LONG,
        -1,
        description=(
            "The most input records a mini-batch may buffer; reaching it ends the bundle. "
            "Must be positive when mini-batch is enabled (-1, the default, means unset)."
        ),
    )
)

TABLE_OPTIMIZER_AGG_PHASE_STRATEGY = register(
    ConfigOption(
        "table.optimizer.agg-phase-strategy",
        OptionType.ENUM,
        "AUTO",
        allowed_values=("AUTO", "ONE_PHASE", "TWO_PHASE"),
        description=(
            "How aggregations are split. ONE_PHASE aggregates in a single step after the "
            "shuffle; TWO_PHASE pre-aggregates locally before the shuffle and merges the "
            "partial results after it (used only where every aggregate function can merge); "
            "AUTO lets the planner choose."
        ),
    )
)

EXECUTION_MAX_FLUSH_INTERVAL = register(
    ConfigOption(
        "execution.max-flush-interval",
        OptionType.DURATION,
        None,
        description=(
            "When set, operators whose output is idempotent (later output for a key "
            "supersedes earlier output) buffer the latest output per key and emit it at most "
            "once per this interval, instead of one output per input (FLIP-365). Less output "
            "traffic and more throughput, at the cost of latency and state. Unset by default: "
            "every change is emitted."
        ),
    )
)

EXECUTION_FLUSH_MEMORY_BUFFER_ONLY = register(
    ConfigOption(
        "execution.flush.memory-buffer-only",
        OptionType.BOOLEAN,
        False,
        description=(
            "Whether outputs waiting for the periodic flush are held only in memory. When "
            "true, the buffer is also flushed whenever it reaches "
            "execution.flush.memory-buffer-max-entries, which saves state writes but flushes "
            "more often (FLIP-365)."
        ),
    )
)

EXECUTION_FLUSH_MEMORY_BUFFER_MAX_ENTRIES = register(
    ConfigOption(
        "execution.flush.memory-buffer-max-entries",
        OptionType.INT,
        10000,
        min_value=1,
        description=(
            "changeflow-specific (Flink has no such key): the most entries an operator holds "
            "in its in-memory flush buffer before it is forced to flush, when "
            "execution.flush.memory-buffer-only is true."
        ),
    )
)

TABLE_EXEC_SINK_UPSERT_MATERIALIZE = register(
    ConfigOption(
        "table.exec.sink.upsert-materialize",
        OptionType.ENUM,
        "AUTO",
        allowed_values=("NONE", "AUTO", "FORCE"),
        description=(
            "Whether an upsert materializer runs before an upsert sink to put a changelog that "
            "a shuffle may have reordered back in order per primary key. AUTO adds it where "
            "the planner cannot prove the order is kept; NONE never adds it; FORCE always "
            "adds it."
        ),
    )
)

TABLE_EXEC_SINK_UPSERT_MATERIALIZE_STRATEGY_TYPE = register(
    ConfigOption(
        "table.exec.sink.upsert-materialize-strategy.type",
        OptionType.ENUM,
        "LEGACY",  # Flink 2.3's default (and FLIP-558's): new strategies are opt-in
        allowed_values=("LEGACY", "VALUE", "MAP", "ADAPTIVE"),
        # FLIP-558 spells the key this way; Flink shipped the name above.
        fallback_keys=("table.exec.sink.upsert-materialize.strategy",),
        description=(
            "How the sink upsert materializer keeps each key's history (SinkUpsertMaterializerV2, FLINK-38461 / FLIP-558). LEGACY: one "
            "list per key, fine for short histories, per-key TTL only. VALUE: like LEGACY but "
            "compatible with MAP. MAP: ordered per-key state with O(1) work per record on long "
            "histories. ADAPTIVE: starts as VALUE and switches a key to MAP when its history "
            "reaches the high threshold, and back below the low one."
        ),
    )
)

TABLE_EXEC_SINK_UPSERT_MATERIALIZE_STRATEGY_ADAPTIVE_THRESHOLD_HIGH = register(
    ConfigOption(
        "table.exec.sink.upsert-materialize-strategy.adaptive.threshold.high",
        OptionType.LONG,
        50,
        min_value=1,
        fallback_keys=("table.exec.sink.upsert-materialize.adaptive.threshold.high",),
        description=(
            "With the ADAPTIVE strategy, the number of history entries for a key at which it "
            "switches from VALUE to MAP. Flink's default depends on the state backend; 50 is "
            "its RocksDB value, the backend changeflow's streaming state uses."
        ),
    )
)

TABLE_EXEC_SINK_UPSERT_MATERIALIZE_STRATEGY_ADAPTIVE_THRESHOLD_LOW = register(
    ConfigOption(
        "table.exec.sink.upsert-materialize-strategy.adaptive.threshold.low",
        OptionType.LONG,
        40,
        min_value=0,
        fallback_keys=("table.exec.sink.upsert-materialize.adaptive.threshold.low",),
        description=(
            "With the ADAPTIVE strategy, the number of history entries for a key at which it "
            "switches back from MAP to VALUE. Flink's RocksDB default is 40. Must be below the "
            "high threshold (checked when an INSERT is planned)."
        ),
    )
)

TABLE_EXEC_SINK_REQUIRE_ON_CONFLICT = register(
    ConfigOption(
        "table.exec.sink.require-on-conflict",
        OptionType.BOOLEAN,
        True,
        description=(
            "Whether an INSERT into an upsert sink must carry an ON CONFLICT clause when the "
            "query's upsert key differs from the sink's primary key. When true (the default) "
            "such a statement fails at planning; false restores the older behaviour, whose "
            "results may depend on arrival order."
        ),
    )
)

TABLE_EXEC_SINK_NOT_NULL_ENFORCER = register(
    ConfigOption(
        "table.exec.sink.not-null-enforcer",
        OptionType.ENUM,
        "ERROR",
        allowed_values=("ERROR", "DROP"),
        description=(
            "What an INSERT does with a NULL written into a NOT NULL column of the sink table "
            "(a PRIMARY KEY column is NOT NULL): ERROR (the default) fails the job naming the "
            "column and the change; DROP drops the change silently. As Flink's option."
        ),
    )
)

TABLE_EXEC_STATE_TTL = register(
    ConfigOption(
        "table.exec.state.ttl",
        OptionType.DURATION,
        "0 ms",
        description=(
            "How long state for a key may sit idle (not updated) before it may be cleared. "
            "State is kept at least this long and cleared some time after. 0 ms, the default, "
            "keeps state forever."
        ),
    )
)

# ----------------------------------------------------------------------------------------
#  changeflow's own keys.
# ----------------------------------------------------------------------------------------

CHANGEFLOW_CHECKPOINT_DIR = register(
    ConfigOption(
        "changeflow.checkpoint-dir",
        OptionType.STRING,
        None,
        description=(
            "Where streaming jobs keep their checkpoints (Spark checkpointLocation): a "
            "streaming INSERT job or a named DataStream execute() uses <dir>/<job name> and "
            "resumes from it when run again; interactive queries (SELECT, "
            "execute_and_collect) use a temporary directory below it. Unset: a new temporary "
            "directory per job, so nothing resumes."
        ),
    )
)

CHANGEFLOW_SPARK_MASTER = register(
    ConfigOption(
        "changeflow.spark.master",
        OptionType.STRING,
        "local[*]",
        description=(
            "The Spark master URL used when changeflow creates its own SparkSession; ignored "
            "when the environment is given an existing session."
        ),
    )
)

CHANGEFLOW_SHIP_PACKAGE = register(
    ConfigOption(
        "changeflow.ship-package",
        OptionType.BOOLEAN,
        True,
        description=(
            "Off a local[...] master, add a zip of the driver's changeflow package to the "
            "session (SparkContext.addPyFile) so that executors without changeflow run it. "
            "false: the executors' Python environment provides changeflow."
        ),
    )
)

CHANGEFLOW_STATE_BUCKETS = register(
    ConfigOption(
        "changeflow.state.buckets",
        OptionType.INT,
        8,
        min_value=1,
        description=(
            "How many hash buckets each stateful operator spreads its keys over. A bucket is "
            "the unit Spark groups by and one Python call folds, so a few buckets per core "
            "balance parallelism against per-call overhead."
        ),
    )
)

CHANGEFLOW_SOURCE_ROWS_PER_BATCH = register(
    ConfigOption(
        "changeflow.source.rows-per-batch",
        OptionType.INT,
        1_000_000,
        min_value=1,
        description=(
            "The most rows per micro-batch for sources changeflow implements itself, when "
            "mini-batch is off (with mini-batch on, table.exec.mini-batch.size bounds it)."
        ),
    )
)


# ----------------------------------------------------------------------------------------
#  Checks across keys.
# ----------------------------------------------------------------------------------------


class _ReadsOptions(Protocol):
    def get_option(self, option: ConfigOption) -> Any: ...


def validate_mini_batch(conf: _ReadsOptions) -> None:
    """Check the mini-batch keys together, as Flink's planner does when it plans a query.

    With ``table.exec.mini-batch.enabled`` true, both ``table.exec.mini-batch.allow-latency``
    and ``table.exec.mini-batch.size`` must be greater than zero. Raises ``ValueError``
    listing every problem; does nothing when mini-batch is off.
    """
    if not conf.get_option(TABLE_EXEC_MINI_BATCH_ENABLED):
        return
    problems = []
    latency = conf.get_option(TABLE_EXEC_MINI_BATCH_ALLOW_LATENCY)
    if latency <= datetime.timedelta(0):
        problems.append(
            f"{TABLE_EXEC_MINI_BATCH_ALLOW_LATENCY.key} must be greater than 0 ms "
            f"(it is {format_duration(latency)})"
        )
    size = conf.get_option(TABLE_EXEC_MINI_BATCH_SIZE)
    if size <= 0:
        problems.append(f"{TABLE_EXEC_MINI_BATCH_SIZE.key} must be > 0 (it is {size})")
    if problems:
        raise ValueError(
            f"{TABLE_EXEC_MINI_BATCH_ENABLED.key} is true, but " + "; and ".join(problems) + "."
        )
