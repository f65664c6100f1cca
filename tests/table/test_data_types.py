"""PyFlink's DataTypes, their printing and parsing, from_elements' inference, Schema and descriptors (no Spark)."""

from __future__ import annotations

import datetime
import decimal

import pytest

from changeflow.common import Row
from changeflow.table.type_text import column_width, tableau_text
from changeflow.common.type_values import infer_element_type, to_engine, to_python
from changeflow.plan.type_inference import PlanError
from changeflow.sql.ddl import DdlError, parse_type
from changeflow.table import DataTypes as T
from changeflow.table import FormatDescriptor, Schema, TableDescriptor
from changeflow.table.elements import elements_source, pandas_source


@pytest.mark.parametrize("t, text", [
    (T.NULL(), "NULL"), (T.CHAR(3), "CHAR(3)"), (T.VARCHAR(10), "VARCHAR(10)"), (T.VARCHAR(2147483647), "STRING"),
    (T.STRING(), "STRING"), (T.BOOLEAN(), "BOOLEAN"), (T.BINARY(3), "BINARY(3)"), (T.VARBINARY(5), "VARBINARY(5)"),
    (T.BYTES(), "BYTES"), (T.VARBINARY(2147483647), "BYTES"), (T.DECIMAL(10, 2), "DECIMAL(10, 2)"),
    (T.TINYINT(), "TINYINT"), (T.SMALLINT(), "SMALLINT"), (T.INT(), "INT"), (T.BIGINT(False), "BIGINT NOT NULL"),
    (T.FLOAT(), "FLOAT"), (T.DOUBLE(), "DOUBLE"), (T.DATE(), "DATE"), (T.TIME(), "TIME(0)"), (T.TIME(3), "TIME(3)"),
    (T.TIMESTAMP(), "TIMESTAMP(6)"), (T.TIMESTAMP(3), "TIMESTAMP(3)"), (T.TIMESTAMP_LTZ(3), "TIMESTAMP_LTZ(3)"),
    (T.LOCAL_ZONED_TIMESTAMP(), "TIMESTAMP_LTZ(6)"), (T.ARRAY(T.INT(False)), "ARRAY<INT NOT NULL>"),
    (T.MAP(T.STRING(), T.INT()), "MAP<STRING, INT>"), (T.MULTISET(T.STRING()), "MULTISET<STRING>"),
    (T.ROW([T.FIELD("a", T.INT()), T.FIELD("b", T.STRING())]), "ROW<`a` INT, `b` STRING>"),
    (T.ROW([T.FIELD("a", T.INT(), "the a")]), "ROW<`a` INT 'the a'>"),
    (T.INTERVAL(T.DAY(), T.SECOND(3)), "INTERVAL DAY(2) TO SECOND(3)"),
    (T.INTERVAL(T.YEAR(), T.MONTH()), "INTERVAL YEAR(2) TO MONTH"),
])
def test_types_print_as_flink(t, text):
    assert str(t) == text


def test_not_null_and_nullable_field():
    t = T.STRING().not_null()
    assert str(t) == "STRING NOT NULL" and t.nullable is False
    assert T.INT(nullable=False) == T.INT().not_null()
    row = T.ROW([T.FIELD("a", T.INT()), T.FIELD("m", T.MAP(T.STRING(), T.BIGINT()))])
    assert row.field_names() == ["a", "m"] and row.field_types()[1].key_type == T.STRING()


def test_bad_parameters_are_refused():
    with pytest.raises(ValueError, match="DECIMAL precision"):
        T.DECIMAL(39, 2)
    with pytest.raises(ValueError, match="TIME precision"):
        T.TIME(10)
    with pytest.raises(TypeError, match="ARRAY element"):
        T.ARRAY("INT")  # type: ignore[arg-type]


@pytest.mark.parametrize("text, shown", [
    ("BIGINT", "BIGINT"), ("ARRAY<INT>", "ARRAY<INT>"), ("MAP<STRING, INT>", "MAP<STRING, INT>"),
    ("ROW<a INT, b STRING>", "ROW<`a` INT, `b` STRING>"), ("ROW(a INT, b STRING)", "ROW<`a` INT, `b` STRING>"),
    ("ROW<`a b` ARRAY<MAP<INT, BYTES>>>", "ROW<`a b` ARRAY<MAP<INT, BYTES>>>"), ("TIME(3)", "TIME(3)"),
    ("BINARY(4)", "BINARY(4)"), ("VARBINARY(9)", "VARBINARY(9)"),
    ("MULTISET<STRING NOT NULL>", "MULTISET<STRING NOT NULL>"),
])
def test_type_strings_parse(text, shown):
    data_type, display = parse_type(text)
    assert display == shown
    assert data_type.root == text.split("<")[0].split("(")[0]


def test_parsed_row_type_has_its_fields():
    t, _ = parse_type("ROW<a INT, m MAP<STRING, ARRAY<BIGINT>>>")
    assert t == T.ROW([T.FIELD("a", T.INT()), T.FIELD("m", T.MAP(T.STRING(), T.ARRAY(T.BIGINT())))])


def test_bad_type_strings_name_the_problem():
    with pytest.raises(DdlError, match="expected ','"):
        parse_type("MAP<STRING>")
    with pytest.raises(DdlError, match="unsupported type"):
        parse_type("GEOMETRY")


def test_inference_follows_pyflink():
    assert str(infer_element_type(datetime.datetime(2024, 1, 1))) == "TIMESTAMP_LTZ(6)"
    assert str(infer_element_type(bytearray(b"x"))) == "BYTES"
    assert str(infer_element_type({"k": 1.5})) == "MAP<STRING NOT NULL, DOUBLE>"
    assert str(infer_element_type([1, 2])) == "ARRAY<BIGINT>"
    assert str(infer_element_type(decimal.Decimal("1"))) == "DECIMAL(38, 18)"
    assert str(infer_element_type(Row(x=1.0, y="a"))) == "ROW<`x` DOUBLE, `y` STRING>"
    with pytest.raises(TypeError, match="not supported type"):
        infer_element_type(b"bytes")  # PyFlink refuses bytes too: it wants a bytearray


def test_from_elements_schema_forms():
    named = elements_source([Row(id=1, p=Row(x=1.0, y=None)), Row(id=2, p=Row(x=2.0, y=3.0))])
    assert [(n, str(t)) for n, t in named.schema] == [("id", "BIGINT"), ("p", "ROW<`x` DOUBLE, `y` DOUBLE>")]
    dicts = elements_source(iter([{"b": "x", "a": 1}]))
    assert [n for n, _ in dicts.schema] == ["a", "b"] and dicts.payload == [(1, "x")]
    mapped = elements_source(map(lambda w: (w, 1), ["a", "b"]), ["word", "n"])
    assert mapped.payload == [("a", 1), ("b", 1)]
    values = elements_source([1, 2], T.INT())
    assert [n for n, _ in values.schema] == ["value"]
    short = elements_source([(1, "a")], ["k"])
    assert [n for n, _ in short.schema] == ["k", "_2"]


def test_from_elements_verifies_values():
    schema = T.ROW([T.FIELD("c", T.CHAR(3)), T.FIELD("a", T.ARRAY(T.INT()))])
    with pytest.raises(PlanError, match=r"column 'c' of type CHAR\(3\) cannot hold 'ab' \(str\): length 2, CHAR\(3\) "
                                        "needs exactly 3"):
        elements_source([("ab", [1])], schema)
    with pytest.raises(PlanError, match=r"column 'a' of type ARRAY<INT> cannot hold \['x'\] \(list\): INT cannot hold "
                                        r"'x' \(str\)"):
        elements_source([("abc", ["x"])], schema)
    assert elements_source([("ab", [1])], schema, verify_schema=False).payload == [("ab", [1])]
    with pytest.raises(PlanError, match="cannot infer the type of column 'b'"):
        elements_source([(1, None)], ["a", "b"])


def test_from_pandas_with_a_row_type_or_types():
    import pandas as pd

    pdf = pd.DataFrame({"a": [1, 2], "b": [b"x", None]})
    source = pandas_source(pdf, T.ROW([T.FIELD("id", T.INT()), T.FIELD("by", T.BYTES())]))
    assert [(n, str(t)) for n, t in source.schema] == [("id", "INT"), ("by", "BYTES")]
    typed = pandas_source(pdf, [T.BIGINT(), T.BYTES()])
    assert [n for n, _ in typed.schema] == ["a", "b"]


def test_values_round_trip_through_the_engine_form():
    t = T.ROW([T.FIELD("t", T.TIME()), T.FIELD("m", T.MAP(T.STRING(), T.ARRAY(T.BYTES()))),
               T.FIELD("ltz", T.TIMESTAMP_LTZ(3))])
    value = (datetime.time(1, 2, 3), {"k": [b"a", None]}, datetime.datetime(2024, 1, 2, 3, 4, 5))
    back = to_python(to_engine(value, t), t)
    assert back == Row(datetime.time(1, 2, 3), {"k": [bytearray(b"a"), None]}, datetime.datetime(2024, 1, 2, 3, 4, 5))
    aware = datetime.datetime(2024, 1, 2, 5, 0, tzinfo=datetime.timezone(datetime.timedelta(hours=2)))
    assert to_engine(aware, T.TIMESTAMP_LTZ()) == datetime.datetime(2024, 1, 2, 3, 0)


@pytest.mark.parametrize("value, t, text", [
    (None, T.INT(), "<NULL>"), (True, T.BOOLEAN(), "TRUE"), (bytearray(b"abc"), T.BINARY(3), "x'616263'"),
    (datetime.time(3, 4, 5), T.TIME(), "03:04:05"),
    (datetime.datetime(2024, 1, 2), T.TIMESTAMP(3), "2024-01-02 00:00:00.000"),
    ([1, None], T.ARRAY(T.INT()), "[1, NULL]"), ({"k": 1}, T.MAP(T.STRING(), T.INT()), "{k=1}"),
    (Row(None, None), T.ROW([T.FIELD("a", T.INT()), T.FIELD("b", T.STRING())]), "(NULL, NULL)"),
    ([Row("ann", 30)], T.ARRAY(T.ROW([T.FIELD("n", T.STRING()), T.FIELD("a", T.INT())])), "[(ann, 30)]"),
    (1e10, T.DOUBLE(), "1.0E10"), (decimal.Decimal("-0.5"), T.DECIMAL(10, 2), "-0.50"),
])
def test_values_print_as_flink(value, t, text):
    assert tableau_text(value, t) == text


def test_column_widths_follow_flinks_tableau_style():
    widths = [column_width("x", t) for t in (T.TINYINT(), T.DECIMAL(10, 2), T.TIME(), T.TIME(3), T.TIMESTAMP(),
                                             T.TIMESTAMP_LTZ(0), T.DOUBLE(), T.ARRAY(T.INT()))]
    assert widths == [6, 12, 8, 12, 26, 19, 30, 30]


def test_schema_builder_and_descriptors():
    schema = (Schema.new_builder().column("id", "BIGINT NOT NULL").column("ts", T.TIMESTAMP(3))
              .column_by_expression("id2", "id * 2").watermark("ts", "ts - INTERVAL '5' SECOND")
              .primary_key("id").build())
    assert str(schema) == ("(\n  `id` BIGINT NOT NULL,\n  `ts` TIMESTAMP(3),\n  `id2` AS id * 2,\n"
                           "  WATERMARK FOR `ts` AS ts - INTERVAL '5' SECOND,\n"
                           "  CONSTRAINT `PK_id` PRIMARY KEY (`id`) NOT ENFORCED\n)")
    copy = Schema.new_builder().from_schema(schema).build()
    table = TableDescriptor.for_connector("datagen").schema(copy).comment("c").build().catalog_table("t", True)
    assert table.schema.primary_key == ("id",) and table.schema.watermark is not None
    assert table.schema.watermark.column == "ts" and table.schema.column("id2").expression == "id * 2"
    options = (TableDescriptor.for_connector("kafka").schema(schema)
               .format(FormatDescriptor.for_format("json").option("ignore-parse-errors", True).build(), "key.format")
               .build().get_options())
    assert options == {"connector": "kafka", "key.format": "json", "key.json.ignore-parse-errors": "true"}


def test_schema_refusals_name_the_construct():
    meta = Schema.new_builder().column("id", T.INT()).column_by_metadata("ts", T.TIMESTAMP_LTZ(3), "timestamp").build()
    with pytest.raises(PlanError, match="'ts' is a METADATA column.*connector 'kafka'"):
        TableDescriptor.for_connector("kafka").schema(meta).build().catalog_table("t", True)
    plain = Schema.new_builder().column("id", T.INT()).build()
    parted = TableDescriptor.for_connector("filesystem").schema(plain).partitioned_by("nope").build()
    with pytest.raises(PlanError, match="Partition column 'nope' not defined in the table schema"):
        parted.catalog_table("t", True)
    assert TableDescriptor.for_connector("filesystem").schema(plain).partitioned_by("id").build() \
        .catalog_table("t", True).partition_keys == ("id",)
    bad_watermark = Schema.new_builder().column("id", T.INT()).watermark("id", "id").build()
    with pytest.raises(PlanError, match="Invalid data type of time field"):
        TableDescriptor.for_connector("datagen").schema(bad_watermark).build().catalog_table("t", True)
    with pytest.raises(PlanError, match="already exists"):
        Schema.new_builder().column("a", T.INT()).column("a", T.INT())
