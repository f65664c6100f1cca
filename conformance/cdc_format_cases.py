"""Conformance cases for the changelog formats (``debezium-json``, ``canal-json``, ``maxwell-json``).

Each case is a program ``build(t_env, E)`` over a ``filesystem`` table whose file it
writes into ``E.tmp``, run unchanged by PyFlink 2.3 (``record_flink_cdc_formats.py``
records ``goldens/cdc_formats/<case>.json``) and by changeflow's tests. The cases are
:class:`conformance.sql_cases.SqlCase` objects, recorded by the SQL recorder's
``run_case``; they are kept out of ``sql_cases.CASES`` so the SQL conformance suite
does not run each as a Spark query: ``tests/connectors/test_cdc_formats.py`` checks
the decoded changelogs without Spark, ``test_cdc_formats_spark.py`` the queries.

``FILES`` holds every case's input (the format and the file's lines), so the tests
can decode the same bytes without the case's program.
"""

from __future__ import annotations

import os
from typing import Dict, Tuple

from conformance.sql_cases import WHY_ERROR, WHY_ONE_SOURCE, SqlCase

__all__ = ["CDC_CASES", "FILES", "SCHEMA", "TWO_LEVEL_SQL"]

SCHEMA = "id INT, name STRING, score INT"

# Debezium (no schema): every op, in one file. An update changes score, and for id 2
# its name as well; a delete removes id 3; a snapshot read (r) inserts id 4.
DEBEZIUM = [
    '{"before":null,"after":{"id":1,"name":"a","score":10},"op":"c","ts_ms":1}',
    '{"before":null,"after":{"id":2,"name":"b","score":20},"op":"c","ts_ms":2}',
    '{"before":null,"after":{"id":3,"name":"a","score":30},"op":"c","ts_ms":3}',
    '{"before":{"id":1,"name":"a","score":10},"after":{"id":1,"name":"a","score":15},"op":"u","ts_ms":4}',
    '{"before":{"id":2,"name":"b","score":20},"after":{"id":2,"name":"a","score":20},"op":"u","ts_ms":5}',
    '{"before":{"id":3,"name":"a","score":30},"after":null,"op":"d","ts_ms":6}',
    '{"before":null,"after":{"id":4,"name":"c","score":40},"op":"r","ts_ms":7}',
    '{"before":{"id":1,"name":"a","score":15},"after":{"id":1,"name":"c","score":5},"op":"u","ts_ms":8}',
]

# Debezium with schema-include (Kafka Connect's schemas.enable): the change under "payload".
DEBEZIUM_SCHEMA = [
    '{"schema":{"type":"struct"},"payload":{"before":null,"after":{"id":1,"name":"a","score":10},"op":"c"}}',
    '{"schema":{"type":"struct"},"payload":{"before":{"id":1,"name":"a","score":10},'
    '"after":{"id":1,"name":"a","score":11},"op":"u"}}',
    '{"schema":{"type":"struct"},"payload":{"before":{"id":1,"name":"a","score":11},"after":null,"op":"d"}}',
]

# Bad records among good ones: skipped with debezium-json.ignore-parse-errors.
DEBEZIUM_BAD = [
    '{"before":null,"after":{"id":1,"name":"a","score":10},"op":"c"}',
    '{"before":null,"after":{"id":2,"name":"b","score":20}',  # truncated
    '{"before":null,"after":{"id":3,"name":"c","score":30}}',  # no op
    '{"before":null,"after":{"id":4,"name":"d","score":40},"op":"x"}',  # unknown op
    '{"before":null,"after":{"id":"five","name":"e","score":50},"op":"c"}',  # a wrong type: null
    '{"before":null,"after":null,"op":"d"}',  # a delete without before
    '{"before":{"id":1,"name":"a","score":10},"after":{"id":1,"name":"a","score":12},"op":"u"}',
]

# Canal: INSERT of two rows, UPDATE whose "old" holds only the changed fields, a DDL
# event (CREATE, skipped), a DELETE, and a row of another database (database.include).
CANAL = [
    '{"data":[{"id":1,"name":"a","score":10},{"id":2,"name":"b","score":20}],"database":"shop",'
    '"table":"t","type":"INSERT","old":null}',
    '{"data":[{"id":1,"name":"a","score":15}],"database":"shop","table":"t","type":"UPDATE",'
    '"old":[{"score":10}]}',
    '{"data":null,"database":"shop","table":"t","type":"CREATE","old":null,"sql":"create table t (id int)"}',
    '{"data":[{"id":2,"name":"c","score":25}],"database":"shop","table":"t","type":"UPDATE",'
    '"old":[{"name":"b","score":20}]}',
    '{"data":[{"id":9,"name":"z","score":90}],"database":"other","table":"t","type":"INSERT","old":null}',
    '{"data":[{"id":1,"name":"a","score":15}],"database":"shop","table":"t","type":"DELETE","old":null}',
]

# Maxwell: insert, update with "old" holding the changed fields, delete.
MAXWELL = [
    '{"database":"shop","table":"t","type":"insert","ts":1,"data":{"id":1,"name":"a","score":10}}',
    '{"database":"shop","table":"t","type":"insert","ts":2,"data":{"id":2,"name":"b","score":20}}',
    '{"database":"shop","table":"t","type":"update","ts":3,"data":{"id":1,"name":"a","score":12},'
    '"old":{"score":10}}',
    '{"database":"shop","table":"t","type":"delete","ts":4,"data":{"id":2,"name":"b","score":20}}',
]

# A two-level aggregation: names' totals, then how many names have each total.
TWO_LEVEL_SQL = ("SELECT total, COUNT(*) AS names FROM "
                 "(SELECT name, SUM(score) AS total FROM src GROUP BY name) GROUP BY total")

# case name -> (format, the file's lines, extra WITH options)
FILES: Dict[str, Tuple[str, list, Dict[str, str]]] = {}
CDC_CASES: Dict[str, SqlCase] = {}


def _table(t_env, E, fmt: str, lines: list, options: Dict[str, str]) -> None:
    directory = os.path.join(E.tmp, "src")
    os.makedirs(directory, exist_ok=True)
    with open(os.path.join(directory, "data.json"), "w", encoding="utf-8") as f:
        f.write("".join(line + "\n" for line in lines))
    extra = "".join(f", '{k}' = '{v}'" for k, v in options.items())
    t_env.execute_sql(f"CREATE TABLE src ({SCHEMA}) WITH ('connector' = 'filesystem', "
                      f"'path' = '{directory}', 'format' = '{fmt}'{extra})")


def _case(name: str, fmt: str, lines: list, query: str, description: str, *, mode: str = "streaming",
          options: Dict[str, str] | None = None, compare: str = "changelog",
          error_mentions: Tuple[str, ...] = ()) -> None:
    options = dict(options or {})
    FILES[name] = (fmt, lines, options)

    def build(t_env, E) -> object:
        _table(t_env, E, fmt, lines, options)
        return t_env.sql_query(query)

    build.__name__ = name
    CDC_CASES[name] = SqlCase(name=name, build=build, mode=mode, compare=compare,
                              why=WHY_ERROR if compare == "error" else WHY_ONE_SOURCE,
                              description=description, error_mentions=error_mentions)


_case("debezium_changelog", "debezium-json", DEBEZIUM, "SELECT * FROM src",
      "Every Debezium op: c and r insert, u retracts before and adds after, d deletes before.")
_case("debezium_two_level_aggregate", "debezium-json", DEBEZIUM, TWO_LEVEL_SQL,
      "A two-level aggregation over a Debezium changelog: updates and deletes retract through both levels.")
_case("debezium_two_level_aggregate_batch", "debezium-json", DEBEZIUM, TWO_LEVEL_SQL,
      "Batch mode refuses a source that produces updates and deletes.", mode="batch", compare="error",
      error_mentions=("INSERT-only",))
_case("debezium_schema_include", "debezium-json", DEBEZIUM_SCHEMA, "SELECT * FROM src",
      "schema-include: each change is read from the record's payload.",
      options={"debezium-json.schema-include": "true"})
_case("debezium_ignore_parse_errors", "debezium-json", DEBEZIUM_BAD, "SELECT * FROM src",
      "ignore-parse-errors: records that do not parse, lack op or have an unknown op are skipped; "
      "a value of the wrong type is null.", options={"debezium-json.ignore-parse-errors": "true"})
_case("debezium_missing_op", "debezium-json", DEBEZIUM_BAD[2:3], "SELECT * FROM src",
      "A record without op fails the job.", compare="error", error_mentions=("Debezium",))
_case("debezium_truncated", "debezium-json", DEBEZIUM_BAD[1:2], "SELECT * FROM src",
      "A truncated record fails the job.", compare="error", error_mentions=("Debezium",))
_case("canal_changelog", "canal-json", CANAL, "SELECT * FROM src",
      "Canal: INSERT of several rows, UPDATE with the changed fields in old, DDL skipped, DELETE.")
_case("canal_database_include", "canal-json", CANAL, "SELECT * FROM src",
      "canal-json.database.include keeps the changes of the matching database only.",
      options={"canal-json.database.include": "sho.*"})
_case("maxwell_changelog", "maxwell-json", MAXWELL, "SELECT * FROM src",
      "Maxwell: insert, update with the changed fields in old, delete.")
_case("maxwell_unknown_type", "maxwell-json", ['{"type":"truncate","data":{"id":1}}'], "SELECT * FROM src",
      "An unknown Maxwell type fails the job.", compare="error", error_mentions=("Maxwell",))

