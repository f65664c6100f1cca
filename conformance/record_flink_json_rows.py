"""Record Flink 2.3's JSON row formats over the cases of ``json_row_cases.py`` (goldens in goldens/formats/).

Usage: PATH=<pyflink venv>/bin:$PATH python conformance/record_flink_json_rows.py [case ...]

No job runs: Flink's ``JsonRowDeserializationSchema`` and ``JsonRowSerializationSchema`` (the Java
objects PyFlink's builders make) are called through PyFlink's gateway on each text. A golden holds,
per text: ``row`` (the deserialized row, a JSON value per field: dates and timestamps as Java's
``toString``), ``error`` (the exception chain's last cause, class and message) or ``skipped`` (the
schema returned null: Flink's source drops the record), and ``json``, the text Flink's serializer
writes for that row.
"""

from __future__ import annotations

import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from json_row_cases import CASES, row_type  # noqa: E402
from recording import case_names, record_each  # noqa: E402

GOLDENS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "goldens", "formats")


def _python(value):
    """A Java value of a deserialized row as a JSON value (Java's toString for dates and times)."""
    from py4j.java_collections import JavaArray
    from py4j.java_gateway import JavaObject

    if isinstance(value, JavaArray):
        return [_python(v) for v in value]
    if isinstance(value, JavaObject):
        if value.getClass().getName() == "org.apache.flink.types.Row":
            return [_python(value.getField(i)) for i in range(value.getArity())]
        return value.toString()
    if isinstance(value, float) and value != value:
        return "NaN"
    return value


def _cause(error) -> str:
    text = str(error)
    causes = [line.strip() for line in text.splitlines() if line.strip().startswith("Caused by: ")]
    last = causes[-1][len("Caused by: "):] if causes else text.splitlines()[0]
    return last.split(" (")[0][:300]


def record(case):
    from pyflink.datastream import StreamExecutionEnvironment
    from pyflink.datastream.formats.json import JsonRowDeserializationSchema, JsonRowSerializationSchema

    StreamExecutionEnvironment.get_execution_environment()  # starts the gateway
    from pyflink.common import Types

    type_info = row_type(Types, case["fields"])
    builder = JsonRowDeserializationSchema.builder().type_info(type_info)
    for option in case["options"]:
        builder = getattr(builder, option)()
    reader = builder.build()._j_deserialization_schema
    writer = JsonRowSerializationSchema.builder().with_type_info(type_info).build()._j_serialization_schema
    return run_schemas(case, reader, writer, _python, "json")


def run_schemas(case, reader, writer, value, written):
    """The golden of ``case``: each text through Flink's Java ``reader``, and a row it gives through
    ``writer``; the row's values as ``value`` makes them, the text written under the key ``written``."""
    for schema in (reader, writer):
        schema.open(None)  # makes the ObjectMapper / CsvMapper (the context is unused by these schemas)
    results = []
    for text in case["texts"]:
        entry = {"text": text}
        try:
            row = reader.deserialize(bytearray(text.encode("utf-8")))
        except Exception as error:  # py4j's error: keep the root cause
            entry["error"] = _cause(error)
            results.append(entry)
            continue
        if row is None:
            entry["skipped"] = True
        else:
            entry["row"] = value(row)
            entry[written] = bytes(writer.serialize(row)).decode("utf-8")
        results.append(entry)
    return {"case": json.loads(json.dumps(case)), "results": results}


def main(argv=None, cases=CASES, record_case=record, doc=__doc__) -> int:
    """Record the chosen cases (the JSON row cases, or another format's with its ``record_case``)."""
    names = case_names(argv, cases, doc)
    if names is None:
        return 0
    return record_each(cases, names, GOLDENS, record_case, summary=lambda golden: f"{len(golden['results'])} texts")


if __name__ == "__main__":
    sys.exit(main())
