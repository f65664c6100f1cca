"""FileSink without Spark: file names, atomic publication, a replayed micro-batch, the builders' checks."""

import os

import pytest

from changeflow.common import Encoder, Types
from changeflow.connectors.sink_job import SinkJob
from changeflow.datastream.connectors import DeliveryGuarantee, NumberSequenceSource
from changeflow.datastream.connectors.file_system import (BucketAssigner, FileSink, FileSource, OutputFileConfig,
                                                          StreamFormat)


def sink(base):
    s = FileSink.for_row_format(str(base), Encoder.simple_string_encoder()) \
        .with_bucket_assigner(BucketAssigner.base_path_bucket_assigner()) \
        .with_output_file_config(OutputFileConfig.builder().with_part_prefix("p").with_part_suffix(".txt").build()) \
        .build()
    s.bind_type(Types.TUPLE([Types.STRING(), Types.INT()]))
    return s


def listing(base):
    return {n: (base / n).read_text() for n in sorted(os.listdir(base))}


def test_a_micro_batch_run_again_after_a_restart_replaces_its_file(tmp_path):
    base, jobdir = tmp_path / "out", tmp_path / "job"
    jobdir.mkdir()
    first = sink(base)
    job = SinkJob.in_directory(str(jobdir), resumed=False)
    first.open_job(job)
    first.write_batch([("a", 1)], 0)
    first.write_batch([("b", 2), ("c", None)], 1)
    # The job stops after delivering micro-batch 1, before Spark committed it: the restarted
    # job (same checkpoint, same writer id) runs micro-batch 1 again, here with other records.
    again = sink(base)
    again.open_job(SinkJob.in_directory(str(jobdir), resumed=True))
    again.write_batch([("b", 3)], 1)
    again.write_batch([("d", 4)], 2)
    w = job.writer
    assert listing(base) == {f"p-{w}-0.txt": "(a,1)\n", f"p-{w}-1.txt": "(b,3)\n", f"p-{w}-2.txt": "(d,4)\n"}


def test_files_land_in_date_time_buckets_and_pickled_records_print_as_python(tmp_path):
    s = FileSink.for_row_format(str(tmp_path), Encoder.simple_string_encoder()).build()
    s.write([("x", 1)])          # no stream type bound: Python's str
    [bucket] = os.listdir(tmp_path)
    [name] = os.listdir(tmp_path / bucket)
    assert name.startswith("part-") and (tmp_path / bucket / name).read_text() == "('x', 1)\n"
    assert BucketAssigner.date_time_bucket_assigner("yyyy/MM").pattern == "%Y/%m"
    with pytest.raises(ValueError, match="pattern letter 'E'"):
        BucketAssigner.date_time_bucket_assigner("EEE")


def test_unsupported_parts_are_refused_by_name():
    with pytest.raises(NotImplementedError, match="monitor_continuously"):
        FileSource.for_record_stream_format(StreamFormat.text_line_format(), "/x").monitor_continuously(None)
    with pytest.raises(NotImplementedError, match="for_bulk_format"):
        FileSink.for_bulk_format("/x", None)
    with pytest.raises(NotImplementedError, match="for_bulk_file_format"):
        FileSource.for_bulk_file_format(None, "/x")
    with pytest.raises(ValueError, match="UTF-8 only"):
        StreamFormat.text_line_format("latin-1")
    with pytest.raises(ValueError, match=r"start \(3\) must be <= end \(1\)"):
        NumberSequenceSource(3, 1)
    assert DeliveryGuarantee.EXACTLY_ONCE.value == 0


def test_generic_function_and_state_classes_subscript_as_in_pyflink():
    from changeflow.datastream import ProcessWindowFunction, WindowFunction
    from changeflow.datastream.functions import AllWindowFunction, ProcessAllWindowFunction
    from changeflow.datastream.state import ListState, MapState, ValueState
    from changeflow.datastream.window import Trigger, WindowAssigner

    class Sum(WindowFunction[tuple, tuple, str, object]):
        def apply(self, key, window, inputs):
            return [(key, sum(v for _, v in inputs))]

    assert Sum().apply("a", None, [("a", 1), ("a", 2)]) == [("a", 3)]
    for generic in (ProcessWindowFunction[int, int, str, object], AllWindowFunction[int, int, object],
                    ProcessAllWindowFunction[int, int, object], ValueState[int], ListState[int],
                    MapState[str, int], Trigger[int, object], WindowAssigner[int, object]):
        assert generic.__origin__ is not None


def test_pyflink_names_changeflow_lacks_import_and_are_refused_when_used():
    from changeflow.datastream.connectors.file_system import (FileCompactStrategy, FileEnumeratorProvider,
                                                              StreamingFileSink)
    with pytest.raises(NotImplementedError, match="StreamingFileSink"):
        StreamingFileSink.for_row_format("/x", Encoder.simple_string_encoder())
    with pytest.raises(NotImplementedError, match="FileCompactStrategy"):
        FileCompactStrategy.builder()
    with pytest.raises(NotImplementedError, match="default_splittable_file_enumerator"):
        FileEnumeratorProvider.default_splittable_file_enumerator()
