"""changeflow.datastream.connectors on Spark: FileSource, FileSink and NumberSequenceSource, batch and streaming."""

import os
import sys

import pytest
from pyspark import cloudpickle

from changeflow.common import Configuration, Encoder, Types, WatermarkStrategy
from changeflow.datastream import RuntimeExecutionMode, StreamExecutionEnvironment
from changeflow.datastream.connectors import NumberSequenceSource
from changeflow.datastream.connectors.file_system import (BucketAssigner, FileSink, FileSource, OutputFileConfig,
                                                          RollingPolicy, StreamFormat)

cloudpickle.register_pickle_by_value(sys.modules[__name__])


@pytest.fixture
def env_of(spark):
    def make(mode):
        conf = Configuration()
        conf.set_string("changeflow.state.buckets", "2")
        conf.set_string("changeflow.source.rows-per-batch", "2")  # several micro-batches
        env = StreamExecutionEnvironment.get_execution_environment(conf, spark_session=spark)
        env.set_runtime_mode(mode)
        return env
    return make


def part_files(base):
    """Every visible file below ``base``: path relative to base -> its lines."""
    out = {}
    for root, _, files in os.walk(base):
        for name in files:
            path = os.path.join(root, name)
            with open(path) as f:
                out[os.path.relpath(path, base)] = f.read().splitlines()
    return out


def write_input(tmp_path):
    src = tmp_path / "in"
    (src / "nested").mkdir(parents=True)
    (src / "a.txt").write_text("to be or\nnot to be\n")
    (src / "nested" / "b.txt").write_text("be\n")
    (src / ".hidden").write_text("never read\n")
    return src


@pytest.mark.parametrize("mode", [RuntimeExecutionMode.BATCH, RuntimeExecutionMode.STREAMING])
def test_file_source_to_file_sink_word_count(env_of, tmp_path, mode):
    src, out = write_input(tmp_path), tmp_path / "out"
    env = env_of(mode)
    lines = env.from_source(FileSource.for_record_stream_format(StreamFormat.text_line_format(), str(src))
                            .process_static_file_set().build(), WatermarkStrategy.for_monotonous_timestamps(),
                            "file_source")
    assert lines.get_type() == Types.STRING()
    counts = lines.flat_map(lambda line: line.split()) \
        .map(lambda w: (w, 1), output_type=Types.TUPLE([Types.STRING(), Types.INT()])) \
        .key_by(lambda p: p[0]).reduce(lambda a, b: (a[0], a[1] + b[1]))
    counts.sink_to(FileSink.for_row_format(str(out), Encoder.simple_string_encoder())
                   .with_output_file_config(OutputFileConfig.builder().with_part_prefix("prefix")
                                            .with_part_suffix(".ext").build())
                   .with_rolling_policy(RollingPolicy.default_rolling_policy()).build())
    env.execute("word count")
    files = part_files(out)
    assert files, "the sink wrote no file"
    # Flink's default bucket: one yyyy-MM-dd--HH directory; names <prefix>-<writer>-<batch><suffix>.
    for path in files:
        bucket, name = path.split(os.sep)
        assert len(bucket) == len("2026-01-01--00") and bucket[10:12] == "--"
        assert name.startswith("prefix-") and name.endswith(".ext")
    lines_written = [line for f in files.values() for line in f]
    if mode is RuntimeExecutionMode.BATCH:   # one final count per word, as Java prints a Tuple2
        assert sorted(lines_written) == ["(be,3)", "(not,1)", "(or,1)", "(to,2)"]
    else:                                    # the running counts, each exactly once
        assert sorted(lines_written) == sorted(["(to,1)", "(be,1)", "(or,1)", "(not,1)", "(to,2)", "(be,2)",
                                                "(be,3)"])
        assert len(files) > 1                # a part file per micro-batch


@pytest.mark.parametrize("mode", [RuntimeExecutionMode.BATCH, RuntimeExecutionMode.STREAMING])
def test_number_sequence_source(env_of, tmp_path, mode):
    env = env_of(mode)
    numbers = env.from_source(NumberSequenceSource(1, 10), WatermarkStrategy.no_watermarks(), "seq")
    assert numbers.get_type() == Types.LONG()
    out = tmp_path / "out"
    numbers.filter(lambda n: n % 3 != 0).sink_to(
        FileSink.for_row_format(str(out), Encoder.simple_string_encoder())
        .with_bucket_assigner(BucketAssigner.base_path_bucket_assigner()).build())
    env.execute()
    written = [int(line) for f in part_files(out).values() for line in f]
    assert sorted(written) == [1, 2, 4, 5, 7, 8, 10]
    assert all(type(n) is int for n in numbers.execute_and_collect())


class CrashOnce:
    """A second sink that fails the job at its second micro-batch, the first time only (after the FileSink wrote it)."""

    def __init__(self, flag):
        self.flag = flag
        self.batches = 0

    def write(self, records):
        self.batches += 1
        if self.batches == 2 and not self.flag.exists():
            self.flag.write_text("crashed")
            raise RuntimeError("simulated crash after the FileSink wrote the micro-batch")


def test_file_sink_neither_loses_nor_duplicates_records_across_a_restart(spark, tmp_path):
    out, flag = tmp_path / "out", tmp_path / "crashed"

    def run():
        conf = Configuration()
        conf.set_string("changeflow.source.rows-per-batch", "2")
        conf.set_string("changeflow.checkpoint-dir", str(tmp_path / "ckpt"))
        env = StreamExecutionEnvironment.get_execution_environment(conf, spark_session=spark)
        env.set_runtime_mode(RuntimeExecutionMode.STREAMING)
        numbers = env.from_source(NumberSequenceSource(1, 6), WatermarkStrategy.no_watermarks(), "seq")
        numbers.sink_to(FileSink.for_row_format(str(out), Encoder.simple_string_encoder())
                        .with_bucket_assigner(BucketAssigner.base_path_bucket_assigner()).build())
        numbers.sink_to(CrashOnce(flag))
        env.execute("file-sink-restart")

    with pytest.raises(Exception, match="simulated crash"):
        run()
    assert flag.exists()
    run()   # resumes from the checkpoint: the failed micro-batch runs again
    written = sorted(int(line) for f in part_files(out).values() for line in f)
    assert written == [1, 2, 3, 4, 5, 6]
    assert not [n for n in os.listdir(out) if n.startswith(".")]   # no in-progress file left
