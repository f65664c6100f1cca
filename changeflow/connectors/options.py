"""Connector options: checked as Flink's factories check them, with Flink's messages.

A factory declares the options it knows; an option it does not know, a
missing required one or a bad value fails when the table is first read or
written (not at ``CREATE TABLE``, as in Flink), naming the table, its options
and the offending key, and listing the supported keys.
"""

from __future__ import annotations

from typing import overload

from changeflow.catalog import CatalogTable
from changeflow.config.durations import parse_duration
from changeflow.plan.type_inference import PlanError


class ConnectorError(PlanError):
    """A table whose connector cannot be created: bad options, or a use the connector lacks."""


def failure(table: CatalogTable, as_sink: bool, reason: str) -> ConnectorError:
    """Flink's "Unable to create a source/sink" message around ``reason``."""
    what = "a sink for writing" if as_sink else "a source for reading"
    listed = "\n".join(f"'{k}'='{hidden(k, v)}'" for k, v in sorted(table.options.items()))
    return ConnectorError(f"Unable to create {what} table '{table.identifier}'.\n\n"
                          f"Table options are:\n\n{listed}\n\n{reason}")


# Flink's GlobalConfiguration.SENSITIVE_KEYS: an option whose key contains one is shown as ******.
_SENSITIVE = ("password", "secret", "fs.azure.account.key", "apikey", "auth-params", "service-key", "token",
              "basic-auth", "jaas.config", "http-headers")


def hidden(key: str, value: str) -> str:
    """``value`` as Flink shows it in a message: ``******`` for a sensitive key such as ``password``.

    >>> hidden("password", "s3cret"), hidden("url", "jdbc:postgresql://h/db")
    ('******', 'jdbc:postgresql://h/db')
    """
    return "******" if any(s in key.lower() for s in _SENSITIVE) else value


def check_keys(table: CatalogTable, as_sink: bool, connector: str, supported: set[str],
               required: tuple[str, ...] = ()) -> None:
    missing = [k for k in required if k not in table.options]
    if missing:
        raise failure(table, as_sink, "One or more required options are missing.\n\nMissing required options are:"
                                      "\n\n" + "\n".join(missing))
    unknown = sorted(k for k in table.options if k not in supported)
    if unknown:
        raise failure(table, as_sink, f"Unsupported options found for '{connector}'.\n\nUnsupported options:\n\n"
                      + "\n".join(unknown) + "\n\nSupported options:\n\n" + "\n".join(sorted(supported)))


@overload
def integer(table: CatalogTable, as_sink: bool, key: str, default: int) -> int: ...


@overload
def integer(table: CatalogTable, as_sink: bool, key: str, default: None = None) -> int | None: ...


def integer(table: CatalogTable, as_sink: bool, key: str, default: int | None = None) -> int | None:
    text = table.options.get(key)
    if text is None:
        return default
    try:
        return int(text.strip())
    except ValueError:
        raise failure(table, as_sink, f"Could not parse value '{text}' for key '{key}'.") from None


def number(table: CatalogTable, as_sink: bool, key: str) -> float | None:
    text = table.options.get(key)
    if text is None:
        return None
    try:
        return float(text.strip())
    except ValueError:
        raise failure(table, as_sink, f"Could not parse value '{text}' for key '{key}'.") from None


def boolean(table: CatalogTable, as_sink: bool, key: str, default: bool = False) -> bool:
    text = table.options.get(key)
    if text is None:
        return default
    if text.strip().lower() not in ("true", "false"):
        raise failure(table, as_sink, f"Could not parse value '{text}' for key '{key}': expected true or false.")
    return text.strip().lower() == "true"


def duration_ms(table: CatalogTable, as_sink: bool, key: str) -> int | None:
    text = table.options.get(key)
    if text is None:
        return None
    try:
        return int(parse_duration(text).total_seconds() * 1000)
    except ValueError as e:
        raise failure(table, as_sink, f"Could not parse value '{text}' for key '{key}': {e}") from None


def batch_only_inserts(table: CatalogTable) -> str:
    """Flink's message for a changelog source (updates and deletes) read in batch mode, which Flink refuses."""
    return (f"Querying a table in batch mode is currently only possible for INSERT-only table sources. But the "
            f"source for table '{table.identifier}' produces other changelog messages than just INSERT.")


def report_skipped(fmt, table: CatalogTable) -> None:
    """Tell the user how many records ``fmt`` skipped with ``ignore-parse-errors`` (a warning), then reset the count.

    Flink skips such records silently; changeflow says how many there were and where the first was.
    """
    skipped = getattr(fmt, "skipped", 0)
    if not skipped:
        return
    import warnings

    warnings.warn(f"table '{table.name}': {skipped} record(s) that do not parse skipped by "
                  f"'{fmt.name}.ignore-parse-errors' (the first: {fmt.first_skipped})", SkippedRecordsWarning,
                  stacklevel=2)
    fmt.skipped, fmt.first_skipped = 0, None


class SkippedRecordsWarning(UserWarning):
    """Records of a source that did not parse and were skipped (``<format>.ignore-parse-errors``)."""
