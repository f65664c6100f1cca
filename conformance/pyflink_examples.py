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
own order varies between runs (several sinks or parallel printing) or is its
operators' internal order (below), ``"sorted-float32"`` when FLOAT sums may also
differ in their last digit (below), ``"shape"`` when the input is random
(datagen). ``NOT_RUN`` lists the others and why: they need external services
(Kafka, Elasticsearch, Pulsar: connectors), or run forever on random input.

Event-time examples: where several keys' results are due at one watermark (the
windows of Alice and Bob that end together, the rows of an OVER window at one
time), Flink emits them in the order of its timer heap and key hashes, not an
order the program defines; changeflow emits each watermark's results in an order
of its own, so those examples compare sorted lines. The printing example of
``event_time_timer.py`` runs at the machine's parallelism under Flink (its lines
carry a subtask prefix). ``table/windowing/sliding_window.py`` slides 5 s
windows every 2 s: Flink sums a window's FLOAT values pane by pane (1 s panes,
merged), changeflow in arrival order, and float32 sums of the same values in
another order can differ in the last digit (86.399994 against 86.4); its lines
compare with numbers rounded to 6 significant digits (docs/differences.md).

Names ending ``_file_sink`` run their example with ``--output`` (:data:`FILE_SINK_ARGS`):
it writes through ``FileSink`` (OutputFileConfig, RollingPolicy) instead of printing,
and what it wrote, its finished part files' lines (:func:`written`), is part of the output.
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
    "table_windowing_tumble_window": ("table/windowing/tumble_window.py", "sorted"),
    "table_windowing_sliding_window": ("table/windowing/sliding_window.py", "sorted-float32"),
    "table_windowing_session_window": ("table/windowing/session_window.py", "sorted"),
    "table_windowing_over_window": ("table/windowing/over_window.py", "sorted"),
    "table_pandas_udaf": ("table/pandas/pandas_udaf.py", "sorted"),
    "datastream_event_time_timer": ("datastream/event_time_timer.py", "sorted"),
    "datastream_tumbling_time_window": ("datastream/windowing/tumbling_time_window.py", "lines"),
    "datastream_sliding_time_window": ("datastream/windowing/sliding_time_window.py", "lines"),
    "datastream_session_with_gap_window": ("datastream/windowing/session_with_gap_window.py", "lines"),
    "datastream_session_with_dynamic_gap_window": ("datastream/windowing/session_with_dynamic_gap_window.py", "lines"),
    "datastream_tumbling_count_window": ("datastream/windowing/tumbling_count_window.py", "lines"),
    # The same programs again with ``--output``: they write through FileSink (OutputFileConfig, RollingPolicy).
    "datastream_tumbling_time_window_file_sink": ("datastream/windowing/tumbling_time_window.py", "lines"),
    "datastream_sliding_time_window_file_sink": ("datastream/windowing/sliding_time_window.py", "lines"),
    "datastream_session_with_gap_window_file_sink": ("datastream/windowing/session_with_gap_window.py", "lines"),
    "datastream_session_with_dynamic_gap_window_file_sink": ("datastream/windowing/session_with_dynamic_gap_window.py",
                                                             "lines"),
    "datastream_tumbling_count_window_file_sink": ("datastream/windowing/tumbling_count_window.py", "lines"),
}

# Its second job reads an unbounded KafkaSource and runs until stopped, under PyFlink too; it also needs a
# broker at localhost:9092 (not yet run against the test broker, tests/kafka_broker.py).
_KAFKA_READ_FOREVER = "needs a Kafka broker at localhost:9092 and its reading job never ends (unbounded KafkaSource)"

NOT_RUN: dict[str, str] = {
    "table/basic_operations.py": "prints Flink's EXPLAIN text (== Abstract Syntax Tree == ...), which changeflow's "
                                 "EXPLAIN of its own plans does not reproduce; its other prints need DataTypes, "
                                 "UDFs, set operations and lateral joins, each covered by its own conformance cases",
    "table/streaming_word_count.py": "unbounded random datagen input: runs until stopped",
    "datastream/streaming_word_count.py": "unbounded random datagen input: runs until stopped",
    "table/pandas/conversion_from_dataframe.py": "random input (numpy.random), nothing to compare",
    "table/async/async_scalar_function.py": "AsyncScalarFunction: not supported (refused by udf())",
    "datastream/asyncio/remote_model_inference.py": "AsyncDataStream: not supported",
    "datastream/connectors/elasticsearch.py": "needs an Elasticsearch service (connectors)",
    "datastream/connectors/kafka_avro_format.py": "needs a Kafka broker (connectors)",
    "datastream/connectors/kafka_bytearray_format.py": "needs a Kafka broker (connectors)",
    "datastream/connectors/kafka_csv_format.py": _KAFKA_READ_FOREVER,
    "datastream/connectors/kafka_json_format.py": _KAFKA_READ_FOREVER,
    "datastream/connectors/kafka_row_field_extractor_example.py": "needs a Kafka broker at localhost:9092 "
                                                                  "(not yet run against the test broker)",
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
    ``"sorted-float32"``: like sorted, with every number that has a fraction rounded to
    6 significant digits (float32 sums added in another order); ``"shape"``: like sorted,
    with every number replaced by ``#`` (random input: the program's output has the same
    lines, not the same values).

    >>> comparable("+I[Bob, 86.399994]\\n+I[Alice, 13.1]", "sorted-float32")
    ['+I[Alice, 13.1]', '+I[Bob, 86.4]']
    """
    lines = [line.rstrip() for line in output.splitlines()
             if line.strip() and not line.startswith(_PYFLINK_NOISE)]
    if how == "lines":
        return lines
    lines = [_SUBTASK.sub("", line) for line in lines]
    if how == "shape":
        lines = [_NUMBER.sub("#", line) for line in lines]
    if how == "sorted-float32":
        lines = [_FRACTION.sub(lambda m: f"{float(m.group()):.6g}", line) for line in lines]
    return sorted(lines)


_FRACTION = re.compile(r"-?\d+\.\d+")

# The arguments of a ``_file_sink`` run: the example's own option for FileSink's base path.
FILE_SINK_ARGS = ["--output", "output"]


def program_args(name: str) -> list[str]:
    """The command-line arguments example ``name`` runs with."""
    return list(FILE_SINK_ARGS) if name.endswith("_file_sink") else []


def written(cwd: str) -> str:
    """What a ``_file_sink`` run wrote under ``cwd``: each line of its finished part files (FileSink hides
    in-progress ones behind a leading dot) as ``written> line``, sorted (file names and how records are
    split into part files differ between engines; the lines are the output)."""
    lines = []
    for root, _, files in os.walk(os.path.join(cwd, FILE_SINK_ARGS[1])):
        for file in files:
            if not file.startswith("."):
                with open(os.path.join(root, file)) as f:
                    lines.extend(f.read().splitlines())
    return "".join(f"written> {line}\n" for line in sorted(lines))
