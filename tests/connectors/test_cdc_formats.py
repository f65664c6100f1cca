"""The changelog formats without Spark: every op and every bad input, options, the source's changelog mode.

The decoded changes of the ``SELECT *`` cases are compared with Flink 2.3's goldens
(``conformance/goldens/cdc_formats``, recorded by ``conformance/record_flink_cdc_formats.py``):
a ``SELECT *`` over a changelog source is its decoded changes, in order.
"""

from __future__ import annotations

import json
import pathlib
import tempfile
import warnings

import pytest

from changeflow.common.row_kind import RowKind
from changeflow.common.types import DataTypes
from changeflow.connectors import create_sink, create_source
from changeflow.connectors.changelog_formats import CanalJsonFormat, DebeziumJsonFormat, MaxwellJsonFormat
from changeflow.connectors.formats import BadRecordError
from changeflow.connectors.kafka import KafkaSource
from changeflow.connectors.options import ConnectorError, SkippedRecordsWarning
from changeflow.sql.ddl import parse_create_table
from conformance.cdc_format_cases import CDC_CASES, FILES, SCHEMA

GOLDENS = pathlib.Path(__file__).resolve().parents[2] / "conformance" / "goldens" / "cdc_formats"
S = (("id", DataTypes.INT()), ("name", DataTypes.STRING()), ("score", DataTypes.INT()))


def _golden(name: str) -> dict:
    return json.loads((GOLDENS / f"{name}.json").read_text(encoding="utf-8"))


def _changes(rows: list[tuple]) -> list[tuple[str, tuple]]:
    return [(str(RowKind(r[-1])), tuple(r[:-1])) for r in rows]


def _table(fmt: str, options: dict | None = None, path: str = "unused", connector: str = "filesystem"):
    extra = "".join(f", '{k}' = '{v}'" for k, v in (options or {}).items())
    where = (f"'connector' = 'filesystem', 'path' = '{path}', 'format' = '{fmt}'" if connector == "filesystem" else
             f"'connector' = 'kafka', 'topic' = 't', 'properties.bootstrap.servers' = 'h:1', "
             f"'value.format' = '{fmt}'")
    table, _ = parse_create_table(f"CREATE TABLE src ({SCHEMA}) WITH ({where}{extra})")
    return table


def _source(name: str, streaming: bool = True):
    fmt, lines, options = FILES[name]
    directory = tempfile.mkdtemp()
    pathlib.Path(directory, "data.json").write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return create_source(_table(fmt, options, directory), streaming)


def test_every_case_has_a_golden_recorded_by_flink():
    assert {p.stem for p in GOLDENS.glob("*.json")} == set(CDC_CASES)
    for name, case in CDC_CASES.items():
        golden = _golden(name)
        assert (golden["case"], golden["mode"], golden["compare"], golden["flink_version"]) == \
            (name, case.mode, case.compare, "2.3.0")


@pytest.mark.parametrize("name", ["debezium_changelog", "debezium_schema_include", "debezium_ignore_parse_errors",
                                  "canal_changelog", "canal_database_include", "maxwell_changelog"])
def test_a_select_star_case_decodes_to_flinks_changelog(name):
    source = _source(name)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        rows = source.rows()
    expected = [(kind, tuple(values)) for kind, values in _golden(name)["changes"]]
    assert _changes(rows) == expected
    skipped = [w for w in caught if issubclass(w.category, SkippedRecordsWarning)]
    if name == "debezium_ignore_parse_errors":  # truncated, no op, unknown op, a delete without before
        assert len(skipped) == 1
        assert "4 record(s) that do not parse skipped by 'debezium-json.ignore-parse-errors'" in str(skipped[0].message)
        assert "data.json, line 2" in str(skipped[0].message)
    else:
        assert not skipped


@pytest.mark.parametrize("name", sorted(n for n, c in CDC_CASES.items()
                                        if c.compare == "error" and c.mode == "streaming"))
def test_a_record_flink_rejects_fails_naming_the_format_record_and_line(name):
    fmt, lines, _ = FILES[name]
    with pytest.raises(BadRecordError) as info:
        _source(name).rows()
    message = str(info.value)
    assert message.startswith(f"Corrupt {CDC_CASES[name].error_mentions[0]} JSON message '{lines[0][:20]}")
    assert "data.json, line 1)" in message
    assert _golden(name)["error"]["stage"] == "collect"  # Flink fails while the job runs, too


def test_batch_mode_is_refused_with_flinks_message():
    with pytest.raises(ConnectorError) as info:
        _source("debezium_two_level_aggregate_batch", streaming=False)
    assert _golden("debezium_two_level_aggregate_batch")["error"]["message"] in str(info.value)


# --- every op, every bad input ---------------------------------------------------------------------

DEBEZIUM_OPS = [
    ('{"after":{"id":1,"name":"a","score":1},"op":"c"}', [("+I", (1, "a", 1))]),
    ('{"after":{"id":1,"name":"a","score":1},"op":"r"}', [("+I", (1, "a", 1))]),
    ('{"before":{"id":1,"name":"a","score":1},"after":{"id":1,"name":"b","score":2},"op":"u"}',
     [("-U", (1, "a", 1)), ("+U", (1, "b", 2))]),
    ('{"before":{"id":1,"name":"a","score":1},"after":null,"op":"d"}', [("-D", (1, "a", 1))]),
    ('{"before":null,"after":{"id":1},"op":"c","source":{"db":"x"},"ts_ms":5}', [("+I", (1, None, None))]),
]

DEBEZIUM_BAD = [
    ('{"after":{"id":1},"op":"c"', "Expecting"),  # truncated
    ('[1, 2]', "a JSON record must be an object"),
    ('{"after":{"id":1}}', 'the "op" field is missing'),
    ('{"after":{"id":1},"op":null}', 'the "op" field is missing'),
    ('{"after":{"id":1},"op":"x"}', 'Unknown "op" value "x"'),
    ('{"after":null,"op":"c"}', 'the "after" field of an "op" "c" message is null'),
    ('{"before":null,"after":{"id":1},"op":"u"}', 'The "before" field of UPDATE message is null'),
    ('{"before":{"id":1},"after":null,"op":"u"}', 'the "after" field of an "op" "u" message is null'),
    ('{"before":null,"after":null,"op":"d"}', 'The "before" field of DELETE message is null'),
    ('{"after":"oops","op":"c"}', 'the "after" field is not a JSON object'),
    ('{"after":{"id":"one"},"op":"c"}', "Fail to deserialize at field: id of type INT"),
]


@pytest.mark.parametrize("line,expected", DEBEZIUM_OPS)
def test_debezium_ops(line, expected):
    assert _changes(DebeziumJsonFormat(False).decode_bytes(line.encode(), "f", S)) == expected


@pytest.mark.parametrize("line,reason", DEBEZIUM_BAD)
def test_a_bad_debezium_record_fails_or_is_skipped_and_counted(line, reason):
    with pytest.raises(BadRecordError, match="Corrupt Debezium JSON message") as info:
        DebeziumJsonFormat(False).decode_bytes(f"\n{line}\n".encode(), "dir/f.json", S)
    assert f"(file dir/f.json, line 2): {reason}" in str(info.value)
    fmt = DebeziumJsonFormat(True)
    rows = fmt.decode_bytes(f"{line}\n".encode(), "f", S)
    if "Fail to deserialize" in reason:  # a value that does not fit is null, as Flink's converters make it
        assert _changes(rows) == [("+I", (None, None, None))] and fmt.skipped == 0
    else:
        assert rows == [] and (fmt.skipped, fmt.first_skipped) == (1, "file f, line 1")


def test_debezium_schema_include_reads_the_payload_and_requires_it():
    fmt = DebeziumJsonFormat(False, schema_include=True)
    line = b'{"schema":{},"payload":{"after":{"id":1,"name":"a","score":1},"op":"c"}}'
    assert _changes(fmt.decode_bytes(line, "f", S)) == [("+I", (1, "a", 1))]
    with pytest.raises(BadRecordError, match='the "payload" field is missing'):
        fmt.decode_bytes(b'{"after":{"id":1},"op":"c"}', "f", S)


def test_a_long_record_is_shortened_and_invalid_utf8_is_named():
    line = '{"after":{"id":1,"name":"' + "x" * 2000 + '"},"op":"?"}'
    with pytest.raises(BadRecordError, match=r"\.\.\. \(2037 characters\)' \(file f, line 1\)"):
        DebeziumJsonFormat(False).decode_bytes(line.encode(), "f", S)
    with pytest.raises(BadRecordError, match="Invalid UTF-8 in file f, line 2"):
        DebeziumJsonFormat(False).decode_bytes(b'{"op":"c","after":{}}\n{"op":"c\xff"}\n', "f", S)
    fmt = DebeziumJsonFormat(True)
    assert _changes(fmt.decode_bytes(b'{"op":"c","after":{"id":1}}\n{"op":"c\xff"}\n', "f", S)) == \
        [("+I", (1, None, None))] and fmt.skipped == 1


def test_timestamp_format_standard():
    schema = (("t", DataTypes.TIMESTAMP(3)),)
    sql, iso = b'{"op":"c","after":{"t":"2024-01-02 03:04:05.5"}}', b'{"op":"c","after":{"t":"2024-01-02T03:04:05.5"}}'
    assert DebeziumJsonFormat(False).decode_bytes(sql, "f", schema)[0][0].microsecond == 500000
    assert DebeziumJsonFormat(False, "ISO-8601").decode_bytes(iso, "f", schema)[0][0].second == 5
    with pytest.raises(BadRecordError, match="not a timestamp of the SQL standard"):
        DebeziumJsonFormat(False).decode_bytes(iso, "f", schema)
    with pytest.raises(BadRecordError, match="not a timestamp of the ISO-8601 standard"):
        DebeziumJsonFormat(False, "ISO-8601").decode_bytes(sql, "f", schema)


CANAL_OPS = [
    ('{"data":[{"id":1,"name":"a","score":1},{"id":2,"name":"b","score":2}],"type":"INSERT"}',
     [("+I", (1, "a", 1)), ("+I", (2, "b", 2))]),
    ('{"data":[{"id":1,"name":"b","score":1}],"old":[{"name":"a"}],"type":"UPDATE"}',
     [("-U", (1, "a", 1)), ("+U", (1, "b", 1))]),
    # a field named in "old" with null was null before: not taken from data
    ('{"data":[{"id":1,"name":"b","score":1}],"old":[{"name":null}],"type":"UPDATE"}',
     [("-U", (1, None, 1)), ("+U", (1, "b", 1))]),
    # Flink's findValue searches all of "old": a field changed in one row counts as named for all
    ('{"data":[{"id":1,"name":"b","score":1},{"id":2,"name":"c","score":7}],"old":[{"name":"a"},{"score":6}],'
     '"type":"UPDATE"}',
     [("-U", (1, "a", None)), ("+U", (1, "b", 1)), ("-U", (2, None, 6)), ("+U", (2, "c", 7))]),
    ('{"data":[{"id":1,"name":"a","score":1}],"type":"DELETE"}', [("-D", (1, "a", 1))]),
    ('{"data":null,"type":"CREATE","sql":"CREATE TABLE t (id INT)"}', []),
]

CANAL_BAD = [
    ('{"data":[{"id":1}]}', 'the "type" field is missing'),
    ('{"data":[{"id":1}],"type":"TRUNCATE"}', 'Unknown "type" value "TRUNCATE"'),
    ('{"type":"INSERT"}', 'the "data" field is missing'),
    ('{"data":{"id":1},"type":"INSERT"}', 'the "data" field is not a JSON array'),
    ('{"data":[null],"type":"DELETE"}', 'a row of "data" is null'),
    ('{"data":[{"id":1}],"type":"UPDATE"}', 'the "old" field is missing'),
    ('{"data":[{"id":1},{"id":2}],"old":[{"id":0}],"type":"UPDATE"}', '"old" has 1 rows, "data" 2'),
]


@pytest.mark.parametrize("line,expected", CANAL_OPS)
def test_canal_types(line, expected):
    assert _changes(CanalJsonFormat(False).decode_bytes(line.encode(), "f", S)) == expected


@pytest.mark.parametrize("line,reason", CANAL_BAD)
def test_a_bad_canal_record_fails_or_is_skipped(line, reason):
    with pytest.raises(BadRecordError, match="Corrupt Canal JSON message") as info:
        CanalJsonFormat(False).decode_bytes(line.encode(), "f", S)
    assert reason in str(info.value)
    fmt = CanalJsonFormat(True)
    assert fmt.decode_bytes(line.encode(), "f", S) == [] and fmt.skipped == 1


def test_canal_database_and_table_include_match_the_whole_name():
    line = '{"data":[{"id":1}],"database":"%s","table":"%s","type":"INSERT"}'
    fmt = CanalJsonFormat(False, database="sho.*", table="orders")
    for db, table, kept in (("shop", "orders", 1), ("myshop", "orders", 0), ("shop", "orders2", 0)):
        assert len(fmt.decode_bytes((line % (db, table)).encode(), "f", S)) == kept
    with pytest.raises(BadRecordError, match='the "database" field is missing'):
        fmt.decode_bytes(b'{"data":[{"id":1}],"type":"INSERT"}', "f", S)


MAXWELL_OPS = [
    ('{"type":"insert","data":{"id":1,"name":"a","score":1}}', [("+I", (1, "a", 1))]),
    ('{"type":"update","data":{"id":1,"name":"b","score":1},"old":{"name":"a"}}',
     [("-U", (1, "a", 1)), ("+U", (1, "b", 1))]),
    ('{"type":"delete","data":{"id":1,"name":"a","score":1}}', [("-D", (1, "a", 1))]),
]

MAXWELL_BAD = [
    ('{"data":{"id":1}}', 'the "type" field is missing'),
    ('{"type":"bootstrap-insert","data":{"id":1}}', 'Unknown "type" value "bootstrap-insert"'),
    ('{"type":"insert"}', 'the "data" field is missing'),
    ('{"type":"update","data":{"id":1}}', 'the "old" field of an update is missing'),
]


@pytest.mark.parametrize("line,expected", MAXWELL_OPS)
def test_maxwell_types(line, expected):
    assert _changes(MaxwellJsonFormat(False).decode_bytes(line.encode(), "f", S)) == expected


@pytest.mark.parametrize("line,reason", MAXWELL_BAD)
def test_a_bad_maxwell_record_fails_or_is_skipped(line, reason):
    with pytest.raises(BadRecordError, match="Corrupt Maxwell JSON message") as info:
        MaxwellJsonFormat(False).decode_bytes(line.encode(), "f", S)
    assert reason in str(info.value)
    fmt = MaxwellJsonFormat(True)
    assert fmt.decode_bytes(line.encode(), "f", S) == [] and fmt.skipped == 1


# --- options ---------------------------------------------------------------------------------------

def test_options_are_flinks_and_checked():
    for fmt, option in (("debezium-json", "debezium-json.schema-include"), ("canal-json", "canal-json.table.include"),
                        ("maxwell-json", "maxwell-json.map-null-key.mode")):
        create_source(_table(fmt, {option: "true" if "schema" in option else "x", f"{fmt}.ignore-parse-errors": "true",
                                   f"{fmt}.timestamp-format.standard": "ISO-8601"}), True)
    with pytest.raises(ConnectorError, match="(?s)Unsupported options found for 'filesystem'.*"
                                             "Unsupported options:\n\ndebezium-json.database.include"):
        create_source(_table("debezium-json", {"debezium-json.database.include": "x"}), True)
    with pytest.raises(ConnectorError, match=r"Unsupported value 'SQL2' for maxwell-json.timestamp-format.standard"):
        create_source(_table("maxwell-json", {"maxwell-json.timestamp-format.standard": "SQL2"}), True)
    with pytest.raises(ConnectorError, match=r"Invalid regular expression '\(' for option 'canal-json.table.include'"):
        create_source(_table("canal-json", {"canal-json.table.include": "("}), True)


def test_as_a_sink_format_they_take_updates():
    # Writing them is tested in test_changelog_sinks.py (against Flink's records).
    for connector in ("filesystem", "kafka"):
        assert create_sink(_table("canal-json", connector=connector), True).accepts_updates


def test_kafka_refuses_a_changelog_key_format_as_flink():
    table, _ = parse_create_table(
        f"CREATE TABLE src ({SCHEMA}) WITH ('connector' = 'kafka', 'topic' = 't', 'properties.bootstrap.servers' = "
        "'h:1', 'scan.startup.mode' = 'earliest-offset', 'key.format' = 'debezium-json', 'key.fields' = 'id', "
        "'value.format' = 'json')")
    with pytest.raises(ConnectorError, match="A key format should only deal with INSERT-only records"):
        create_source(table, True)


def test_kafka_records_decode_to_changes_with_their_record_index():
    source = create_source(_table("debezium-json", {"value.debezium-json.ignore-parse-errors": "true",
                                                    "scan.startup.mode": "earliest-offset"}, connector="kafka"), True)
    assert isinstance(source, KafkaSource) and source.changelog
    values = [b'{"after":{"id":1,"name":"a","score":1},"op":"c"}', None, b"not json",
              b'{"before":{"id":1,"name":"a","score":1},"after":{"id":1,"name":"a","score":2},"op":"u"}']
    with pytest.warns(SkippedRecordsWarning, match=r"1 record\(s\) that do not parse .*\(the first: record 2\)"):
        rows, kept = source.decode_records([None] * 4, values, lambda i: f"record {i}")
    assert _changes(rows) == [("+I", (1, "a", 1)), ("-U", (1, "a", 1)), ("+U", (1, "a", 2))]
    assert kept == [0, 3, 3]  # the tombstone gives nothing; the bad record is skipped
    strict = create_source(_table("maxwell-json", {"scan.startup.mode": "earliest-offset"}, connector="kafka"), True)
    with pytest.raises(BadRecordError, match=r"Corrupt Maxwell JSON message 'nope' \(Kafka record of topic 't', "
                                             r"partition 0, offset 7\)"):
        strict.decode_records([None], [b"nope"], lambda i: strict.where("t", 0, 7))


# --- the source's changelog mode -------------------------------------------------------------------

def test_explain_shows_the_full_changelog_of_the_source_as_flink():
    from changeflow.table import EnvironmentSettings, ExplainDetail, TableEnvironment
    from conformance.cdc_format_cases import TWO_LEVEL_SQL

    t_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    t_env.execute_sql(f"CREATE TABLE src ({SCHEMA}) WITH ('connector' = 'filesystem', 'path' = "
                      f"'{tempfile.mkdtemp()}', 'format' = 'debezium-json')")
    ours = t_env.sql_query(TWO_LEVEL_SQL).explain(ExplainDetail.CHANGELOG_MODE)
    flink = _golden("debezium_two_level_aggregate")["explain"]
    scan = [line for line in ours.splitlines() if "TableSourceScan" in line]
    assert scan and all(line.endswith("changelogMode=[I,UB,UA,D])") for line in scan)
    assert flink.splitlines()[-1].endswith("changelogMode=[I,UB,UA,D])")
    # both levels retract: the inner aggregation's input and output carry every kind, as in Flink's plan
    assert "GroupAggregate(groupBy=[name], select=[name, SUM(score) AS total], changelogMode=[I,UB,UA,D])" in ours
    assert "GroupAggregate(groupBy=[name], select=[name, SUM_RETRACT(score) AS total], changelogMode=[I,UB,UA,D])" \
        in flink
