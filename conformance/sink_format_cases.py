"""Conformance cases for the changelog formats as sink formats (``debezium-json``, ``canal-json``, ``maxwell-json``).

Each case writes a query's changes to a ``filesystem`` sink in one format, run unchanged by
PyFlink 2.3 (``record_flink_sink_formats.py`` records ``goldens/sink_formats/<case>.json``:
the records of the sink's files, in order, or the error) and by changeflow's tests
(``tests/connectors/test_changelog_sinks_spark.py``), which compare the bytes record by record.
The input is the Debezium changelog of ``cdc_format_cases`` (read as a ``debezium-json``
file: its changes are Flink's exactly) or an insert-only ``VALUES`` list for the value encodings.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Dict, Optional

from conformance.cdc_format_cases import DEBEZIUM, SCHEMA, TWO_LEVEL_SQL

__all__ = ["SINK_CASES", "SinkCase", "create_source", "sink_ddl"]

TYPES_COLUMNS = "id INT, d DECIMAL(10, 2), x DOUBLE, ts TIMESTAMP(3), dt DATE, ok BOOLEAN, s STRING"
TYPES_SQL = ("SELECT * FROM (VALUES "
             "(1, CAST(100.00 AS DECIMAL(10, 2)), CAST(1.5 AS DOUBLE), TIMESTAMP '2024-01-02 03:04:05.120', "
             "DATE '2024-01-02', TRUE, 'a\"b'), "
             "(2, CAST(0.10 AS DECIMAL(10, 2)), CAST(1e10 AS DOUBLE), TIMESTAMP '2024-01-02 03:04:05', "
             "DATE '1999-12-31', FALSE, CAST(NULL AS STRING)), "
             "(3, CAST(NULL AS DECIMAL(10, 2)), CAST(NULL AS DOUBLE), CAST(NULL AS TIMESTAMP(3)), "
             "CAST(NULL AS DATE), CAST(NULL AS BOOLEAN), 'ü')) AS T(id, d, x, ts, dt, ok, s)")


@dataclass(frozen=True)
class SinkCase:
    name: str
    format: str
    columns: str  # the sink table's columns
    query: str  # over ``src`` (the Debezium file) or VALUES
    description: str
    options: Dict[str, str] = field(default_factory=dict)
    error: bool = False  # Flink refuses the INSERT: the golden holds its message


SINK_CASES: Dict[str, SinkCase] = {}


def _case(name: str, fmt: str, columns: str, query: str, description: str,
          options: Optional[Dict[str, str]] = None, error: bool = False) -> None:
    SINK_CASES[name] = SinkCase(name, fmt, columns, query, description, dict(options or {}), error)


def create_source(t_env, tmp: str) -> None:
    """The Debezium changelog ``src`` (the file written into ``tmp``)."""
    directory = os.path.join(tmp, "src")
    os.makedirs(directory, exist_ok=True)
    with open(os.path.join(directory, "data.json"), "w", encoding="utf-8") as f:
        f.write("".join(line + "\n" for line in DEBEZIUM))
    t_env.execute_sql(f"CREATE TABLE src ({SCHEMA}) WITH ('connector' = 'filesystem', 'path' = '{directory}', "
                      f"'format' = 'debezium-json')")


def sink_ddl(c: SinkCase, path: str, name: str = "snk") -> str:
    extra = "".join(f", '{k}' = '{v}'" for k, v in c.options.items())
    return (f"CREATE TABLE {name} ({c.columns}) WITH ('connector' = 'filesystem', 'path' = '{path}', "
            f"'format' = '{c.format}'{extra})")


TWO_LEVEL_COLUMNS = "total INT, names BIGINT"
for _fmt in ("debezium-json", "canal-json", "maxwell-json"):
    _short = _fmt.split("-")[0]
    _case(f"{_short}_sink_two_level", _fmt, TWO_LEVEL_COLUMNS, TWO_LEVEL_SQL,
          f"A two-level aggregation's retracting changelog written as {_fmt}: -U/-D as deletes, +I/+U as inserts.")
    _case(f"{_short}_sink_changelog", _fmt, SCHEMA, "SELECT * FROM src",
          f"A Debezium changelog passed through to {_fmt}: every update a delete and an insert.")
    _case(f"{_short}_sink_types", _fmt, TYPES_COLUMNS, TYPES_SQL,
          f"Value encodings in {_fmt}: DECIMAL (1E+2), DOUBLE, TIMESTAMP, DATE, BOOLEAN, escaped strings, nulls.")
_case("debezium_sink_plain_ignore_nulls", "debezium-json", TYPES_COLUMNS, TYPES_SQL,
      "encode.decimal-as-plain-number, encode.ignore-null-fields and ISO-8601 timestamps.",
      {"debezium-json.encode.decimal-as-plain-number": "true", "debezium-json.encode.ignore-null-fields": "true",
       "debezium-json.timestamp-format.standard": "ISO-8601"})
_case("canal_sink_read_options", "canal-json", TWO_LEVEL_COLUMNS, TWO_LEVEL_SQL,
      "Read options (database.include, ignore-parse-errors) are accepted in a sink and change nothing.",
      {"canal-json.database.include": "x", "canal-json.ignore-parse-errors": "true",
       "canal-json.encode.ignore-null-fields": "true"})
_case("debezium_sink_schema_include", "debezium-json", TWO_LEVEL_COLUMNS, TWO_LEVEL_SQL,
      "schema-include is refused in a sink.", {"debezium-json.schema-include": "true"}, error=True)
_case("json_sink_updating", "json", TWO_LEVEL_COLUMNS, TWO_LEVEL_SQL,
      "A plain json sink refuses an updating query.", error=True)
_case("csv_sink_updating", "csv", TWO_LEVEL_COLUMNS, TWO_LEVEL_SQL,
      "A plain csv sink refuses an updating query.", error=True)
