"""Partitioned ``filesystem`` tables: Hive-style directories and Flink's partition commit.

A table declared ``PARTITIONED BY (k1, k2)`` keeps each row under
``path/k1=v1/k2=v2/``; the data files hold the other columns only, and a reader
takes the partition columns from the directory names, as Flink does. A value is
written as its text (``str``; ``true``/``false``; a date as ``yyyy-MM-dd``), with
the characters Hive escapes written ``%XX``; NULL or an empty string is written as
``partition.default-name`` (``__DEFAULT_PARTITION__``) and read back as NULL.

*Partition commit* tells downstream readers that a partition is complete: with
``sink.partition-commit.policy.kind`` = ``success-file`` the sink writes an empty
file (``sink.partition-commit.success-file.name``, ``_SUCCESS``) into a partition
once its trigger fires:

* ``process-time`` (the default): when the time now is past the partition's
  creation (the first write to it since its last commit) plus
  ``sink.partition-commit.delay``;
* ``partition-time``: when the query's watermark is past the time extracted from
  the partition's values (``partition.time-extractor.timestamp-pattern``, e.g.
  ``$dt $hm:00``, read with ``partition.time-extractor.timestamp-formatter``, in
  ``sink.partition-commit.watermark-time-zone``) plus the delay.

The trigger is checked after each micro-batch (changeflow's checkpoint, where
Flink checks at each checkpoint), and at the end of bounded input every pending
partition commits, as Flink's committer does on end of input; a batch job commits
every partition it wrote. ``metastore`` (no metastore here) and ``custom`` policies,
and a custom time extractor, are refused by name.
"""

from __future__ import annotations

import datetime
import re
from dataclasses import dataclass
from decimal import Decimal

from changeflow.catalog import CatalogTable
from changeflow.common.types import INTEGRAL, DataType
from changeflow.config.memory_size import parse_memory_size
from changeflow.connectors.options import boolean, duration_ms, failure

DEFAULT_NAME = "__DEFAULT_PARTITION__"
SUCCESS_FILE = "_SUCCESS"

PARTITION_OPTIONS = {"sink.partition-commit.trigger", "sink.partition-commit.delay",
                     "sink.partition-commit.watermark-time-zone", "sink.partition-commit.policy.kind",
                     "sink.partition-commit.policy.class", "sink.partition-commit.policy.class.parameters",
                     "sink.partition-commit.success-file.name", "partition.time-extractor.kind",
                     "partition.time-extractor.class", "partition.time-extractor.timestamp-pattern",
                     "partition.time-extractor.timestamp-formatter", "sink.shuffle-by-partition.enable",
                     "partition.default-name"}

# The characters Hive (and Flink's PartitionPathUtils) write as %XX in a directory name.
_ESCAPED = frozenset(chr(c) for c in range(1, 32)) | frozenset('"#%\'*/:=?\\\x7f{[]^')
_STRINGS = ("CHAR", "VARCHAR", "STRING")
_PARTITION_TYPES = (*_STRINGS, *INTEGRAL, "BOOLEAN", "DATE", "DECIMAL")


def escape(value: str) -> str:
    """``value`` as a directory name's part: Hive's special characters as ``%XX``.

    >>> escape("10:15"), escape("a/b=c d")
    ('10%3A15', 'a%2Fb%3Dc d')
    """
    return "".join(f"%{ord(c):02X}" if c in _ESCAPED else c for c in value)


def unescape(text: str) -> str:
    """The value ``escape`` wrote as ``text``; a ``%`` not followed by two hex digits stays.

    >>> unescape("10%3A15"), unescape("100%")
    ('10:15', '100%')
    """
    return re.sub(r"%([0-9A-Fa-f]{2})", lambda m: chr(int(m.group(1), 16)), text)


def check_partition_types(table: CatalogTable, as_sink: bool) -> dict[str, DataType]:
    """The partition columns' types; a type changeflow cannot render as a directory name is refused by name."""
    types = {c.name: c.data_type for c in table.schema.physical_columns()}
    for key in table.partition_keys:
        if types[key].root not in _PARTITION_TYPES:
            raise failure(table, as_sink, f"Partition column '{key}' has type {types[key]}: changeflow partitions "
                                          f"by {', '.join(_PARTITION_TYPES)} columns only.")
    return {k: types[k] for k in table.partition_keys}


def render(value, default_name: str) -> str:
    """A partition value's text (before escaping): Flink writes the value's string form."""
    if value is None:
        return default_name
    if isinstance(value, bool):
        text = "true" if value else "false"
    elif isinstance(value, datetime.date):
        text = value.isoformat()
    else:
        text = str(value)
    return text if text != "" else default_name


def restore(text: str | None, t: DataType):
    """The column value of a partition directory's text (None: the default partition)."""
    if text is None:
        return None
    if t.root in _STRINGS:
        return text
    if t.root in INTEGRAL:
        return int(text)
    if t.root == "BOOLEAN":
        return text.lower() == "true"
    if t.root == "DATE":
        return datetime.date.fromisoformat(text)
    return Decimal(text)


def partition_path(keys: tuple[str, ...], values: tuple, default_name: str) -> str:
    """``k1=v1/k2=v2`` for one row's partition values.

    >>> partition_path(("dt", "hm"), ("2024-01-01", "10:15"), DEFAULT_NAME)
    'dt=2024-01-01/hm=10%3A15'
    >>> partition_path(("dt",), (None,), DEFAULT_NAME)
    'dt=__DEFAULT_PARTITION__'
    """
    return "/".join(f"{k}={escape(render(v, default_name))}" for k, v in zip(keys, values, strict=True))


def parse_partition(keys: tuple[str, ...], file_path: str, default_name: str) -> list[str | None]:
    """The partition values (texts; None for the default partition) of a file ``.../k1=v1/k2=v2/file``.

    >>> parse_partition(("dt", "hm"), "/t/dt=2024-01-01/hm=10%3A15/part-0", DEFAULT_NAME)
    ['2024-01-01', '10:15']
    """
    parts = file_path.rstrip("/").split("/")[:-1][-len(keys):] if keys else []
    values: list[str | None] = []
    for key, part in zip(keys, parts, strict=False):
        name, eq, text = part.partition("=")
        if not eq or name != key:
            break
        value = unescape(text)
        values.append(None if value == default_name else value)
    if len(values) != len(keys):
        raise ValueError(f"File '{file_path}' is not in a partition directory "
                         f"{'/'.join(k + '=...' for k in keys)}: a partitioned table reads only those")
    return values


# --- partition commit -------------------------------------------------------------


@dataclass(frozen=True)
class CommitOptions:
    """The partition-commit options of a sink, checked."""

    trigger: str  # process-time or partition-time
    delay_ms: int
    success_file: str | None  # the success file's name, None without the success-file policy
    pattern: str | None  # partition.time-extractor.timestamp-pattern
    formatter: str | None  # partition.time-extractor.timestamp-formatter
    zone: datetime.tzinfo
    default_name: str = DEFAULT_NAME  # partition.default-name


def commit_options(table: CatalogTable) -> CommitOptions:
    """Read and check the partition-commit and rolling options (errors name the option)."""
    options = table.options
    trigger = options.get("sink.partition-commit.trigger", "process-time")
    if trigger not in ("process-time", "partition-time"):
        raise failure(table, True, f"Could not parse value '{trigger}' for key 'sink.partition-commit.trigger': "
                                   f"expected process-time or partition-time.")
    delay = duration_ms(table, True, "sink.partition-commit.delay") or 0
    kinds = [k.strip() for k in options.get("sink.partition-commit.policy.kind", "").split(",") if k.strip()]
    for kind in kinds:
        if kind == "metastore":
            raise failure(table, True, "Option 'sink.partition-commit.policy.kind' = 'metastore' is not supported: "
                                       "changeflow's filesystem tables have no metastore; use 'success-file'.")
        if kind == "custom":
            raise failure(table, True, "Option 'sink.partition-commit.policy.kind' = 'custom' is not supported: "
                                       "changeflow loads no Java commit policy class; use 'success-file'.")
        if kind != "success-file":
            raise failure(table, True, f"Could not parse value '{kind}' for key 'sink.partition-commit.policy.kind':"
                                       f" expected success-file (metastore and custom are not supported).")
    for key in ("sink.partition-commit.policy.class", "sink.partition-commit.policy.class.parameters",
                "partition.time-extractor.class"):
        if key in options:
            raise failure(table, True, f"Option '{key}' is not supported: changeflow loads no Java classes.")
    kind = options.get("partition.time-extractor.kind", "default")
    if kind != "default":
        raise failure(table, True, f"Option 'partition.time-extractor.kind' = '{kind}' is not supported: only "
                                   f"'default' (changeflow loads no Java extractor class).")
    zone_name = options.get("sink.partition-commit.watermark-time-zone", "UTC")
    try:
        zone = datetime.timezone.utc if zone_name == "UTC" else _zone(zone_name)
    except (KeyError, ValueError):
        raise failure(table, True, f"Could not parse value '{zone_name}' for key "
                                   f"'sink.partition-commit.watermark-time-zone': expected a time zone id such as "
                                   f"'UTC' or 'Asia/Shanghai'.") from None
    for key in ("sink.rolling-policy.rollover-interval", "sink.rolling-policy.check-interval",
                "sink.rolling-policy.inactivity-interval"):
        duration_ms(table, True, key)  # checked: a file never stays open past its micro-batch anyway
    size = options.get("sink.rolling-policy.file-size")
    if size is not None:
        try:
            parse_memory_size(size)
        except ValueError as e:
            raise failure(table, True, f"Could not parse value '{size}' for key 'sink.rolling-policy.file-size': "
                                       f"{e}") from None
    boolean(table, True, "sink.shuffle-by-partition.enable")  # checked: the driver writes every partition anyway
    formatter = options.get("partition.time-extractor.timestamp-formatter")
    if formatter is not None:
        _formatter_regex(table, formatter)
    success = options.get("sink.partition-commit.success-file.name", SUCCESS_FILE)
    if "/" in success or not success:
        raise failure(table, True, f"Could not parse value '{success}' for key "
                                   f"'sink.partition-commit.success-file.name': expected a file name.")
    return CommitOptions(trigger, delay, success if "success-file" in kinds else None,
                         options.get("partition.time-extractor.timestamp-pattern"), formatter, zone,
                         options.get("partition.default-name", DEFAULT_NAME))


def _zone(name: str) -> datetime.tzinfo:
    from zoneinfo import ZoneInfo

    return ZoneInfo(name)


# The lenient default: yyyy-M-d, optionally followed by " H:m:s" and a fraction (Flink's default extractor).
_DEFAULT_TIMESTAMP = re.compile(r"^(?P<y>\d{1,10})-(?P<M>\d{1,2})-(?P<d>\d{1,2})"
                                r"(?: (?P<H>\d{1,2}):(?P<m>\d{1,2}):(?P<s>\d{1,2})(?:\.(?P<S>\d{0,9}))?)?$")
_PATTERN_LETTERS = {"yyyy": "y", "uuuu": "y", "MM": "M", "dd": "d", "HH": "H", "mm": "m", "ss": "s", "SSS": "S"}


def _formatter_regex(table: CatalogTable, formatter: str) -> re.Pattern:
    """A Java DateTimeFormatter pattern (the letters yyyy MM dd HH mm ss SSS and literals) as a regex."""
    out, i = [], 0
    while i < len(formatter):
        if formatter[i] == "'":
            end = formatter.find("'", i + 1)
            if end < 0:
                break
            out.append(re.escape(formatter[i + 1:end]))
            i = end + 1
            continue
        for letters, group in _PATTERN_LETTERS.items():
            if formatter.startswith(letters, i):
                out.append(f"(?P<{group}>\\d{{{len(letters)}}})")
                i += len(letters)
                break
        else:
            if formatter[i].isalpha():
                raise failure(table, True, f"Option 'partition.time-extractor.timestamp-formatter' = '{formatter}':"
                                           f" pattern letter '{formatter[i]}' is not supported (changeflow reads "
                                           f"yyyy, MM, dd, HH, mm, ss and SSS).")
            out.append(re.escape(formatter[i]))
            i += 1
    return re.compile("^" + "".join(out) + "$")


def partition_time_ms(table: CatalogTable, options: CommitOptions, values: list[str | None]) -> int:
    """The time of a partition (epoch ms in the watermark time zone), extracted as Flink's default extractor does."""
    keys = table.partition_keys
    if options.pattern is None:
        text = values[0] or ""
    else:
        text = options.pattern
        for key, value in zip(keys, values, strict=True):  # in key order, as Flink substitutes
            text = text.replace("$" + key, value or "")
    regex = _formatter_regex(table, options.formatter) if options.formatter else _DEFAULT_TIMESTAMP
    match = regex.match(text)
    if match is None:
        raise ValueError(f"table '{table.name}': partition time '{text}' (from partition values {values}) does not "
                         f"match {options.formatter or 'yyyy-MM-dd[ HH:mm:ss]'} "
                         f"('partition.time-extractor.timestamp-formatter')")
    fields = {k: int(v) if v else 0 for k, v in match.groupdict().items()}
    if "y" not in fields:
        raise ValueError(f"table '{table.name}': 'partition.time-extractor.timestamp-formatter' = "
                         f"'{options.formatter}' has no year (yyyy): a partition time needs one")
    fraction = (match.groupdict().get("S") or "").ljust(6, "0")[:6]
    moment = datetime.datetime(fields["y"], fields.get("M") or 1, fields.get("d") or 1, fields.get("H", 0),
                               fields.get("m", 0), fields.get("s", 0), int(fraction or 0), tzinfo=options.zone)
    return int(moment.timestamp() * 1000)


def committable(table: CatalogTable, options: CommitOptions, pending: dict[str, int], now_ms: int,
                watermark: int | None) -> list[str]:
    """The pending partitions (relative path -> creation ms) whose trigger fires now."""
    ready = []
    for partition, created in pending.items():
        if options.trigger == "process-time":
            if now_ms > created + options.delay_ms:
                ready.append(partition)
        elif watermark is not None:
            values = parse_partition(table.partition_keys, partition + "/file", options.default_name)
            if watermark > partition_time_ms(table, options, values) + options.delay_ms:
                ready.append(partition)
    return ready
