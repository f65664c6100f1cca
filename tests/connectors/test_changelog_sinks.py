"""The changelog formats as sink formats, without Spark: records against Flink 2.3's.

Flink's changelog of each case's query is known (``goldens/cdc_formats``: the two-level
aggregation and the Debezium changelog, both exactly Flink's, as the Spark tests check);
encoding it must give Flink's sink records (``goldens/sink_formats``) byte for byte. The
value-encoding cases encode their VALUES rows. Options are checked as Flink checks them.
"""

from __future__ import annotations

import datetime
import decimal
import json
import pathlib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from changeflow.catalog import CatalogTable
from changeflow.common.change import Change
from changeflow.common.row_kind import RowKind
from changeflow.common.types import DataTypes
from changeflow.connectors import ConnectorError, create_sink
from changeflow.connectors.changelog_encoding import ChangelogEncoder, EncodeError
from changeflow.connectors.changelog_formats import CHANGELOG_FORMATS, changelog_format
from changeflow.sql.ddl import parse_create_table
from conformance.sink_format_cases import SINK_CASES
from tests.conformance.test_sql_conformance import materialize

ROOT = pathlib.Path(__file__).resolve().parents[2]


def _golden(folder: str, name: str) -> dict:
    return json.loads((ROOT / "conformance" / "goldens" / folder / f"{name}.json").read_text(encoding="utf-8"))


def _table(columns, options: dict, key: str = "") -> CatalogTable:
    """A sink table of ``columns`` (``(name, type)`` pairs or DDL text) with ``options``."""
    ddl = columns if isinstance(columns, str) else ", ".join(f"`{n}` {t}" for n, t in columns)
    listed = ", ".join(f"'{k}' = '{v}'" for k, v in options.items())
    table, _ = parse_create_table(f"CREATE TABLE snk ({ddl}{key}) WITH ({listed})")
    return table


TWO = (("total", DataTypes.INT()), ("names", DataTypes.BIGINT()))
SRC = (("id", DataTypes.INT()), ("name", DataTypes.STRING()), ("score", DataTypes.INT()))
TYPES = (("id", DataTypes.INT()), ("d", DataTypes.DECIMAL(10, 2)), ("x", DataTypes.DOUBLE()),
         ("ts", DataTypes.TIMESTAMP(3)), ("dt", DataTypes.DATE()), ("ok", DataTypes.BOOLEAN()),
         ("s", DataTypes.STRING()))
TYPE_ROWS = [
    (1, decimal.Decimal("100.00"), 1.5, datetime.datetime(2024, 1, 2, 3, 4, 5, 120000), datetime.date(2024, 1, 2),
     True, 'a"b'),
    (2, decimal.Decimal("0.10"), 1e10, datetime.datetime(2024, 1, 2, 3, 4, 5), datetime.date(1999, 12, 31), False,
     None),
    (3, None, None, None, None, None, "ü"),
]
# the query of each case -> (its columns, Flink's changelog of it)
INPUTS = {
    "two_level": (TWO, "debezium_two_level_aggregate"),
    "changelog": (SRC, "debezium_changelog"),
}


def _encoder(name: str) -> ChangelogEncoder:
    c = SINK_CASES[name]
    columns = TYPES if name.endswith("types") or "ignore_nulls" in name else INPUTS[name.split("_sink_")[1]][0]
    return changelog_format(_table(columns, {"format": c.format, **c.options}), True, c.format)


def _changes(name: str) -> tuple[tuple, list[tuple[RowKind, tuple]]]:
    if name.endswith("types") or "ignore_nulls" in name:
        return TYPES, [(RowKind.INSERT, row) for row in TYPE_ROWS]
    columns, changelog = INPUTS[name.split("_sink_")[1] if "_sink_" in name else name]
    return columns, [(RowKind.from_short_string(kind), tuple(values))
                     for kind, values in _golden("cdc_formats", changelog)["changes"]]


@pytest.mark.parametrize("name", [n for n, c in SINK_CASES.items()
                                  if not c.error and n != "canal_sink_read_options"])
def test_records_are_flinks(name):
    columns, changes = _changes(name)
    ours = _encoder(name).encode_changes(changes, columns).decode().splitlines()
    golden = _golden("sink_formats", name)["records"]
    if name.endswith("types") or "ignore_nulls" in name:  # Flink's VALUES source has no fixed order
        assert sorted(ours) == sorted(golden)
    else:
        assert ours == golden


def test_read_options_are_accepted_in_a_sink_and_change_nothing():
    c = SINK_CASES["canal_sink_read_options"]
    encoder = changelog_format(_table(TWO, {"format": c.format, **c.options}), True, c.format)
    columns, changes = _changes("two_level")
    assert encoder.encode_changes(changes, columns).decode().splitlines() == \
        _golden("sink_formats", c.name)["records"]


@pytest.mark.parametrize("fmt", sorted(CHANGELOG_FORMATS))
def test_written_records_read_back_as_deletes_and_inserts(fmt):
    columns, changes = _changes("two_level")
    data = changelog_format(_table(TWO, {"format": fmt}), True, fmt).encode_changes(changes, columns)
    back = CHANGELOG_FORMATS[fmt](False).decode_bytes(data, "f", columns)
    expected = [values + (RowKind.INSERT.value if kind in (RowKind.INSERT, RowKind.UPDATE_AFTER)
                          else RowKind.DELETE.value,) for kind, values in changes]
    assert back == expected


def test_schema_include_is_refused_in_a_sink_with_flinks_message():
    message = _golden("sink_formats", "debezium_sink_schema_include")["error"].split("Exception: ", 1)[1]
    table = _table(TWO, {"connector": "filesystem", "path": "p", "format": "debezium-json",
                         "debezium-json.schema-include": "true"})
    with pytest.raises(ConnectorError, match="Debezium JSON serialization") as info:
        create_sink(table, True)
    assert message in str(info.value)


def test_an_unknown_option_is_refused_by_name():
    table = _table(TWO, {"connector": "filesystem", "path": "p", "format": "maxwell-json",
                         "maxwell-json.encode.bogus": "1"})
    with pytest.raises(ConnectorError, match="Unsupported options found for 'filesystem'") as info:
        create_sink(table, True)
    assert "maxwell-json.encode.bogus" in str(info.value)


def test_a_bad_map_null_key_mode_is_refused():
    table = _table(TWO, {"connector": "filesystem", "path": "p", "format": "canal-json",
                         "canal-json.map-null-key.mode": "KEEP"})
    with pytest.raises(ConnectorError, match="Unsupported value 'KEEP' for option canal-json.map-null-key.mode"):
        create_sink(table, True)


def test_upsert_changelog_mode_with_a_changelog_format_is_refused():
    table = _table(TWO, {"connector": "filesystem", "path": "p", "format": "debezium-json",
                         "sink.changelog-mode": "upsert"})
    with pytest.raises(ConnectorError, match="cannot be combined with the changelog format 'debezium-json'"):
        create_sink(table, True)


def test_upsert_kafka_refuses_a_changelog_value_format_like_flink():
    table = _table(TWO, {"connector": "upsert-kafka", "topic": "t", "properties.bootstrap.servers": "h:1",
                         "key.format": "json", "value.format": "debezium-json"}, ", PRIMARY KEY (total) NOT ENFORCED")
    with pytest.raises(ConnectorError, match="doesn't support 'debezium-json' as value format"):
        create_sink(table, True)


def test_the_file_sink_takes_updates_and_writes_every_change():
    sink = create_sink(_table(TWO, {"connector": "filesystem", "path": "p", "format": "maxwell-json"}), True)
    assert sink.accepts_updates
    data = sink._encode([Change(RowKind.UPDATE_BEFORE, (1, 2)), Change(RowKind.UPDATE_AFTER, (1, 3))])
    assert data == b'{"data":{"total":1,"names":2},"type":"delete"}\n{"data":{"total":1,"names":3},"type":"insert"}\n'


def test_a_map_null_key_follows_map_null_key_mode():
    columns = (("m", DataTypes.MAP(DataTypes.STRING(), DataTypes.INT())),)
    with pytest.raises(EncodeError, match="Fail to serialize at field: m.*null keys"):
        ChangelogEncoder("debezium-json").record(({None: 1},), RowKind.INSERT, columns)
    assert ChangelogEncoder("maxwell-json", map_null_key_mode="DROP").record(
        ({None: 1, "a": 2},), RowKind.INSERT, columns) == '{"data":{"m":{"a":2}},"type":"insert"}'
    assert ChangelogEncoder("maxwell-json", map_null_key_mode="LITERAL", map_null_key_literal="nul").record(
        ({None: 1},), RowKind.INSERT, columns) == '{"data":{"m":{"nul":1}},"type":"insert"}'


def test_a_type_the_encoder_does_not_know_is_refused_naming_the_column():
    columns = (("t", DataTypes.TIMESTAMP_LTZ(3)),)
    with pytest.raises(EncodeError, match="field: t.*TIMESTAMP_LTZ"):
        ChangelogEncoder("debezium-json").record((datetime.datetime(2024, 1, 1),), RowKind.INSERT, columns)


def test_a_decimal_of_38_digits_keeps_every_digit():
    columns = (("d", DataTypes.DECIMAL(38, 2)),)
    value = decimal.Decimal("123456789012345678901234567890123456.10")
    assert ChangelogEncoder("maxwell-json").record((value,), RowKind.INSERT, columns) == \
        '{"data":{"d":123456789012345678901234567890123456.1},"type":"insert"}'


_KINDS = {0: "+I", 1: "-U", 2: "+U", 3: "-D"}


@given(st.lists(st.tuples(st.integers(0, 4), st.integers(-3, 3)), max_size=30),
       st.sampled_from(sorted(CHANGELOG_FORMATS)))
@settings(max_examples=60, deadline=None)
def test_any_changelog_written_and_read_back_materializes_to_the_same_table(ops, fmt):
    """A random keyed changelog (an upsert by key: -U then +U of a present key, +I of an absent one, -D of a
    present one): encoded, decoded with the same format, materialized, it is the same table."""
    table: dict = {}
    changes: list[tuple[RowKind, tuple]] = []
    for key, value in ops:
        if key in table and value < 0:
            changes.append((RowKind.DELETE, (key, table.pop(key))))
        elif key in table:
            changes += [(RowKind.UPDATE_BEFORE, (key, table[key])), (RowKind.UPDATE_AFTER, (key, value))]
            table[key] = value
        elif value >= 0:
            changes.append((RowKind.INSERT, (key, value)))
            table[key] = value
    columns = (("k", DataTypes.INT()), ("v", DataTypes.BIGINT()))
    data = ChangelogEncoder(fmt).encode_changes(changes, columns)
    back = CHANGELOG_FORMATS[fmt](False).decode_bytes(data, "f", columns)
    got = materialize([(_KINDS[row[-1]], row[:-1]) for row in back])
    assert sorted(tuple(r) for r in got) == sorted(table.items())
