"""Record Flink 2.3's CSV row formats over the cases of ``csv_row_cases.py`` (goldens in goldens/formats/).

Usage: PATH=<pyflink venv>/bin:$PATH python conformance/record_flink_csv_rows.py [case ...]

As ``record_flink_json_rows.py``: no job runs; Flink's ``CsvRowDeserializationSchema`` and
``CsvRowSerializationSchema`` (the Java objects PyFlink's builders make, with the case's options) are
called through PyFlink's gateway on each text. A golden holds, per text, ``row``, ``error`` or
``skipped``, and ``csv``, the text Flink's serializer writes for that row.
"""

from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from csv_row_cases import CASES  # noqa: E402
from json_row_cases import row_type  # noqa: E402
from record_flink_json_rows import _python, run_schemas  # noqa: E402
from record_flink_json_rows import main as record_rows  # noqa: E402


def _value(value):
    """A deserialized value as a JSON value: a BigDecimal as its text, the rest as for the JSON rows."""
    from py4j.java_gateway import JavaObject

    if isinstance(value, JavaObject) and value.getClass().getName() == "org.apache.flink.types.Row":
        return [_value(value.getField(i)) for i in range(value.getArity())]
    return str(value) if type(value).__name__ == "Decimal" else _python(value)


def record(case):
    from pyflink.common import Types
    from pyflink.datastream import StreamExecutionEnvironment
    from pyflink.datastream.formats.csv import CsvRowDeserializationSchema, CsvRowSerializationSchema

    StreamExecutionEnvironment.get_execution_environment()  # starts the gateway
    type_info = row_type(Types, case["fields"])
    reading = CsvRowDeserializationSchema.Builder(type_info)
    for name, *args in case["read"]:
        reading = getattr(reading, name)(*args)
    writing = CsvRowSerializationSchema.Builder(type_info)
    for name, *args in case["write"]:
        writing = getattr(writing, name)(*args)
    reader = reading.build()._j_deserialization_schema
    writer = writing.build()._j_serialization_schema
    return run_schemas(case, reader, writer, _value, "csv")


def main(argv=None) -> int:
    return record_rows(argv, CASES, record, __doc__)


if __name__ == "__main__":
    sys.exit(main())
