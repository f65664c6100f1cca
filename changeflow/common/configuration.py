"""PyFlink's ``Configuration``: string keys, checked against changeflow's known keys.

The methods are PyFlink's (``set_string``, ``get_integer``, ``to_dict``, ...) plus the
``TableConfig`` style ``set(key, value)`` / ``get(key)``, which returns typed values.

Where this differs from Flink, on purpose:

- Values of known keys are parsed and checked when set, not when read, so a bad value fails
  at the line that set it. Unknown keys under ``table.``, ``execution.``, ``parallelism.``,
  ``pipeline.`` and ``changeflow.``, and any key that looks like a misspelling of a known one
  (``tabel.exec.mini-batch.enabled``, ``mini-batch.enabled``), are rejected with the closest
  known keys; Flink would store and ignore them. Flink's keys for its own processes
  (``taskmanager.*``, ``rest.*``, ``state.*`` ...) are accepted and ignored; Flink keys that
  would change results and that changeflow does not implement are refused.
- Values are kept normalized: ``get_string`` and ``to_dict`` return Flink's canonical spelling
  (``"5 s"`` for ``"5000ms"``, ``"true"`` for ``"TRUE"``, ``"BATCH"`` for ``"batch"``).
- A value set under an alias key (``table.exec.sink.upsert-materialize.strategy``) is stored
  under the primary key.

Keys under ``spark.`` are kept as strings and passed to Spark unchecked; other keys are kept as
strings too, so connector and user keys work.

>>> conf = Configuration()
>>> conf.set("table.exec.mini-batch.enabled", "true").set("table.exec.mini-batch.size", 5000)
Configuration({'table.exec.mini-batch.enabled': 'true', 'table.exec.mini-batch.size': '5000'})
>>> conf.get("table.exec.mini-batch.enabled"), conf.get("table.exec.mini-batch.allow-latency")
(True, datetime.timedelta(0))
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from changeflow.config.options import ConfigOption, OptionType, check_key, lookup, to_config_string

__all__ = ["Configuration"]


class Configuration:
    """A map of configuration keys to values, validated against the known keys.

    ``Configuration(other)`` copies ``other``; ``Configuration({"key": "value"})`` sets each key
    as :meth:`set` does (beyond PyFlink), so a misspelt key in a dict fails too.

    >>> conf = Configuration()
    >>> conf.set_string("execution.runtime-mode", "batch").get_string("execution.runtime-mode", "")
    'BATCH'
    >>> conf.set_string("table.exec.mini-batch.enable", "true")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: Unknown configuration key 'table.exec.mini-batch.enable'. Did you mean
    'table.exec.mini-batch.enabled'? ...
    >>> conf.set_string("table.exec.mini-batch.enabled", "yes")
    Traceback (most recent call last):
    ...
    ValueError: Invalid value 'yes' for configuration key 'table.exec.mini-batch.enabled': expected a boolean: true or
    false (case-insensitive).
    >>> conf.set_string("spark.sql.shuffle.partitions", "4").get_integer("spark.sql.shuffle.partitions", 200)
    4
    """

    def __init__(self, other: Configuration | Mapping[str, Any] | None = None):
        # Primary key -> typed value for registered options; -> str for any other key.
        self._values: dict[str, Any] = {}
        if isinstance(other, Configuration):
            self._values.update(other._values)  # checked when they were set there
        elif isinstance(other, Mapping):
            for key, value in other.items():  # beyond PyFlink: a dict, each key checked as set()
                self.set(key, value)
        elif other is not None:
            raise TypeError(f"Configuration() takes a Configuration or a dict, got {type(other).__name__}")

    # ------------------------------------------------------------------------------------
    #  TableConfig style: typed values.
    # ------------------------------------------------------------------------------------

    def set(self, key: str | ConfigOption, value: Any) -> Configuration:
        """Set a key to a value or its string form; returns ``self`` for chaining.

        The value of a known key is parsed and checked now; a bad one raises ``ValueError``
        naming the key, the value and what the key accepts.

        >>> Configuration().set("table.exec.state.ttl", "1 h").get("table.exec.state.ttl")
        datetime.timedelta(seconds=3600)
        """
        option, key = _resolve(key, value)
        if option is not None:
            self._values[option.key] = option.parse(value)
        elif value is None:
            raise ValueError(
                f"Configuration key {key!r} cannot be set to None; to unset it, use remove_config"
            )
        else:
            self._values[key] = to_config_string(value)
        return self

    def get(self, key: str | ConfigOption, default: Any = None) -> Any:
        """The typed value of a key; when unset, ``default`` if given, else the key's default.

        A ``default`` given for a known key is parsed like a value set for it. Known keys give
        their typed value (``bool``, ``int``, ``float``, ``str``,
        ``timedelta``, or the enum value's name as ``str``); other keys give their string.
        An unknown key under a checked prefix raises ``ValueError``, as ``set`` does.

        >>> conf = Configuration()
        >>> conf.get("parallelism.default"), conf.get("execution.max-flush-interval")
        (1, None)
        >>> conf.get("execution.max-flush-interval", "3 s")
        datetime.timedelta(seconds=3)
        """
        option, key = _resolve(key)
        if option is None:
            return self._values.get(key, default)
        if key in self._values:
            return self.get_option(option)
        if default is not None:
            return option.parse(default)
        return option.default

    def get_option(self, option: ConfigOption) -> Any:
        """The typed value of an option, or its default when unset.

        >>> from changeflow.config import TABLE_EXEC_SINK_UPSERT_MATERIALIZE
        >>> Configuration().get_option(TABLE_EXEC_SINK_UPSERT_MATERIALIZE)
        'AUTO'
        """
        if not isinstance(option, ConfigOption):
            raise TypeError(f"get_option() takes a ConfigOption, got {type(option).__name__}")
        for key in (option.key, *option.fallback_keys):
            if key in self._values:
                # Parsing is a no-op for a value stored typed; it types a string stored under
                # the key of an option nobody registered.
                return option.parse(self._values[key])
        return option.default

    # ------------------------------------------------------------------------------------
    #  PyFlink's Configuration methods.
    # ------------------------------------------------------------------------------------

    def get_string(self, key: str, default_value: str) -> str:
        """The value of a key as a string, or ``default_value`` when unset.

        Like PyFlink, the getters never fail on an unknown key: they return the default.
        """
        option, key = _resolve_leniently(key)
        if key not in self._values:
            return default_value
        value = self._values[key]
        return option.format(value) if option is not None else value

    def set_string(self, key: str, value: str) -> Configuration:
        """Set a key from a string; returns ``self``."""
        _require(value, str, "set_string", "a str")
        return self.set(key, value)

    def get_integer(self, key: str, default_value: int) -> int:
        """The value of a key as an integer, or ``default_value`` when unset.

        Raises ``ValueError`` if the stored value is not an integer.
        """
        return self._get_as(key, default_value, OptionType.INT)

    def set_integer(self, key: str, value: int) -> Configuration:
        """Set a key to an integer; returns ``self``."""
        _require(value, int, "set_integer", "an int")
        return self.set(key, value)

    def get_boolean(self, key: str, default_value: bool) -> bool:
        """The value of a key as a boolean, or ``default_value`` when unset.

        Raises ``ValueError`` if the stored value is not ``true`` or ``false``.
        """
        return self._get_as(key, default_value, OptionType.BOOLEAN)

    def set_boolean(self, key: str, value: bool) -> Configuration:
        """Set a key to a boolean; returns ``self``."""
        _require(value, bool, "set_boolean", "a bool")
        return self.set(key, value)

    def get_float(self, key: str, default_value: float) -> float:
        """The value of a key as a float, or ``default_value`` when unset.

        Raises ``ValueError`` if the stored value is not a number.
        """
        return self._get_as(key, default_value, OptionType.FLOAT)

    def set_float(self, key: str, value: float) -> Configuration:
        """Set a key to a float; returns ``self``."""
        _require(value, (int, float), "set_float", "a float")
        return self.set(key, value)

    def keys(self) -> set[str]:
        """The keys that are set (primary spellings)."""
        return set(self._values)

    def contains_key(self, key: str) -> bool:
        """Whether a key, or the option it is an alias of, is set."""
        _, key = _resolve_leniently(key)
        return key in self._values

    def to_dict(self) -> dict[str, str]:
        """Every set key with its value as a string.

        >>> Configuration().set("execution.max-flush-interval", 2000).to_dict()
        {'execution.max-flush-interval': '2 s'}
        """
        return {key: self.get_string(key, "") for key in self._values}

    def add_all_to_dict(self, target_dict: dict) -> None:
        """Copy every key, with its value as a string, into ``target_dict``."""
        target_dict.update(self.to_dict())

    def add_all(self, other: Configuration, prefix: str | None = None) -> Configuration:
        """Copy every key of ``other`` into this configuration; returns ``self``.

        With ``prefix``, each key is copied as ``prefix + key`` and checked like any set.
        """
        if not isinstance(other, Configuration):
            raise TypeError(f"add_all() takes a Configuration, got {type(other).__name__}")
        if prefix is None:
            self._values.update(other._values)
        else:
            for key, value in list(other._values.items()):
                self.set(prefix + key, value)
        return self

    def remove_config(self, key: str) -> bool:
        """Unset a key (or the option it is an alias of); True if it was set."""
        _, key = _resolve_leniently(key)
        return self._values.pop(key, _MISSING) is not _MISSING

    # ------------------------------------------------------------------------------------

    def _get_as(self, key: str, default_value: Any, as_type: OptionType) -> Any:
        option, key = _resolve_leniently(key)
        if key not in self._values:
            return default_value
        value = self._values[key]
        if option is not None:
            value = option.format(value)
        # Reading a value as another type is parsing its string form, as Flink converts it.
        return ConfigOption(key, as_type).parse(value)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Configuration):
            return NotImplemented
        return self._values == other._values

    __hash__ = None  # pyright: ignore[reportAssignmentType] - mutable: the data model's way to say unhashable

    def __copy__(self) -> Configuration:
        return Configuration(self)

    def __deepcopy__(self, memo: dict) -> Configuration:
        # Stored values are immutable (str, int, float, bool, timedelta), so a copy is deep.
        return Configuration(self)

    def __repr__(self) -> str:
        return f"Configuration({self.to_dict()!r})"

    __str__ = __repr__


_MISSING = object()


def _resolve(key: str | ConfigOption, *value: Any) -> tuple[ConfigOption | None, str]:
    """The option for a key and the key values are stored under; raises on unknown keys.

    With a ``value`` (a set), a real Flink key changeflow does not implement is refused unless
    the value is Flink's default (see ``changeflow.config.flink_keys``).
    """
    if isinstance(key, ConfigOption):
        return key, key.key
    option = check_key(key, *value)
    return option, (option.key if option is not None else key)


def _resolve_leniently(key: str) -> tuple[ConfigOption | None, str]:
    """Like ``_resolve`` but an unknown key is just a key that is not set."""
    if isinstance(key, ConfigOption):
        return key, key.key
    option = lookup(key)
    return option, (option.key if option is not None else key)


def _require(value: Any, types: type | tuple[type, ...], method: str, wanted: str) -> None:
    # bool is an int subclass; set_integer(True) is a mistake, not 1.
    if isinstance(value, types) and (bool in _as_tuple(types) or not isinstance(value, bool)):
        return
    raise TypeError(f"{method}() takes {wanted} value, got {type(value).__name__}: {value!r}")


def _as_tuple(types: type | tuple[type, ...]) -> tuple[type, ...]:
    return types if isinstance(types, tuple) else (types,)
