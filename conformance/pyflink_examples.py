"""PyFlink's own example programs (the ``pyflink/examples/`` folder of the ``apache-flink`` 2.3.0 wheel).

A PyFlink program must port to changeflow by changing its imports. These are
the programs nobody here wrote that check it: :mod:`record_pyflink_examples`
runs each under PyFlink 2.3 and stores what it prints in
``goldens/examples/<name>.txt``; ``tests/conformance/test_pyflink_examples.py``
runs the same file with ``pyflink`` replaced by ``changeflow`` and compares.

The programs are not copied into this repository: the set-up downloads the wheel
(``pip download apache-flink==2.3.0 --no-deps``, no Flink is installed) and the
test reads them from it (:func:`example_sources`).

``EXAMPLES`` maps a name to the example's path in the wheel and how its output
is compared (:func:`comparable`): ``"lines"`` as printed, ``"sorted"`` when Flink's
own order varies between runs (several sinks or parallel printing), ``"shape"`` when
the input is random (datagen). ``NOT_RUN`` lists the others
and why: they need event time (issue 18), external services (Kafka, Elasticsearch,
Pulsar: connectors), or run forever on random input.
"""

from __future__ import annotations

import glob
import os
import re
import zipfile

WHEEL_VERSION = "2.3.0"

EXAMPLES: dict[str, tuple[str, str]] = {
    "table_mixing_use_of_datastream_and_table": ("table/mixing_use_of_datastream_and_table.py", "shape"),
    "table_multi_sink": ("table/multi_sink.py", "sorted"),
    "table_process_json_data": ("table/process_json_data.py", "sorted"),
    "table_process_json_data_with_udf": ("table/process_json_data_with_udf.py", "sorted"),
    "table_word_count": ("table/word_count.py", "sorted"),
    "datastream_basic_operations": ("datastream/basic_operations.py", "lines"),
    "datastream_process_json_data": ("datastream/process_json_data.py", "sorted"),
    "datastream_state_access": ("datastream/state_access.py", "sorted"),
    "datastream_word_count": ("datastream/word_count.py", "sorted"),
}

NOT_RUN: dict[str, str] = {
    "table/basic_operations.py": "prints Flink's EXPLAIN text (== Abstract Syntax Tree == ...), which changeflow's "
                                 "EXPLAIN of its own plans does not reproduce; its other prints need DataTypes, "
                                 "UDFs, set operations and lateral joins, each covered by its own conformance cases",
    "table/streaming_word_count.py": "unbounded random datagen input: runs until stopped",
    "datastream/streaming_word_count.py": "unbounded random datagen input: runs until stopped",
    "table/pandas/conversion_from_dataframe.py": "random input (numpy.random), nothing to compare",
    "table/async/async_scalar_function.py": "AsyncScalarFunction: not supported (refused by udf())",
    "datastream/asyncio/remote_model_inference.py": "AsyncDataStream: not supported",
    "table/pandas/pandas_udaf.py": "event time (issue 18): a pandas UDAF over tumbling event-time windows",
    "table/windowing/over_window.py": "event time (issue 18)",
    "table/windowing/session_window.py": "event time (issue 18)",
    "table/windowing/sliding_window.py": "event time (issue 18)",
    "table/windowing/tumble_window.py": "event time (issue 18)",
    "datastream/event_time_timer.py": "event time (issue 18)",
    "datastream/windowing/session_with_dynamic_gap_window.py": "event time (issue 18)",
    "datastream/windowing/session_with_gap_window.py": "event time (issue 18)",
    "datastream/windowing/sliding_time_window.py": "event time (issue 18)",
    "datastream/windowing/tumbling_count_window.py": "event time (issue 18)",
    "datastream/windowing/tumbling_time_window.py": "event time (issue 18)",
    "datastream/connectors/elasticsearch.py": "needs an Elasticsearch service (connectors)",
    "datastream/connectors/kafka_avro_format.py": "needs a Kafka broker (connectors)",
    "datastream/connectors/kafka_bytearray_format.py": "needs a Kafka broker (connectors)",
    "datastream/connectors/kafka_csv_format.py": "needs a Kafka broker (connectors)",
    "datastream/connectors/kafka_json_format.py": "needs a Kafka broker (connectors)",
    "datastream/connectors/kafka_row_field_extractor_example.py": "needs a Kafka broker (connectors)",
    "datastream/connectors/pulsar.py": "needs a Pulsar service (connectors)",
}

# The golden's last line when the example fails under PyFlink 2.3 (some of its own examples do).
FAILED = "<<the program fails here under PyFlink 2.3>>"

GOLDENS = os.path.join(os.path.dirname(__file__), "goldens", "examples")


def example_sources(wheel_dir: str) -> dict[str, str]:
    """The source of every example in the ``apache-flink`` wheel under ``wheel_dir``, by path under examples/."""
    wheels = glob.glob(os.path.join(wheel_dir, f"apache_flink-{WHEEL_VERSION}-*.whl"))
    if not wheels:
        raise FileNotFoundError(f"no apache_flink-{WHEEL_VERSION} wheel in {wheel_dir} (the set-up downloads it)")
    prefix = "pyflink/examples/"
    with zipfile.ZipFile(wheels[0]) as wheel:
        return {name[len(prefix):]: wheel.read(name).decode("utf-8") for name in wheel.namelist()
                if name.startswith(prefix) and name.endswith(".py") and not name.endswith("__init__.py")}


def ported(source: str) -> str:
    """The example with its imports changed from PyFlink to changeflow (the only change a port makes)."""
    return source.replace("from pyflink.", "from changeflow.").replace("import pyflink.", "import changeflow.")


# Lines PyFlink's Python workers print to standard output whatever the program (Beam's start-up
# notes), not the program's output.
_PYFLINK_NOISE = ("Using Any for unsupported type", "No module named google.cloud", "PYFLINK_CYTHON_ENABLED")
# Flink's print sink prefixes a line with its subtask ("2> ") when the sink runs in parallel: how many
# subtasks there are depends on the machine, not the program.
_SUBTASK = re.compile(r"^\d+> ")
_NUMBER = re.compile(r"-?\d+(\.\d+)?")


def comparable(output: str, how: str) -> list[str]:
    """The lines of an example's output as compared.

    ``"lines"``: as printed; ``"sorted"``: sorted, without print-sink subtask prefixes;
    ``"shape"``: like sorted, with every number replaced by ``#`` (random input: the
    program's output has the same lines, not the same values).
    """
    lines = [line.rstrip() for line in output.splitlines()
             if line.strip() and not line.startswith(_PYFLINK_NOISE)]
    if how == "lines":
        return lines
    lines = [_SUBTASK.sub("", line) for line in lines]
    if how == "shape":
        lines = [_NUMBER.sub("#", line) for line in lines]
    return sorted(lines)
