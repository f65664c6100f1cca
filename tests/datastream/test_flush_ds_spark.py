"""The flush interval (FLIP-365) for DataStream keyed operators end to end on Spark.

Few queries: each costs seconds.
"""

import sys

from pyspark import cloudpickle

from changeflow.common import Configuration, Types
from changeflow.datastream import KeyedProcessFunction, RuntimeExecutionMode, StreamExecutionEnvironment
from changeflow.datastream import ValueStateDescriptor

cloudpickle.register_pickle_by_value(sys.modules[__name__])

ROWS = [("a", 1), ("b", 2), ("a", 3), ("c", 4), ("a", 5), ("b", 6), ("d", 1), ("a", 2)]
PAIR = Types.TUPLE([Types.STRING(), Types.INT()])


# Interval boundaries are aligned to the clock: an interval far longer than a test
# (and than a loaded CI machine's run) puts no boundary inside a job, so only idle
# input and end of input flush.
LONG = "2400 h"

def environment(spark, **options):
    conf = Configuration()
    conf.set_string("changeflow.state.buckets", "2")
    conf.set_string("changeflow.source.rows-per-batch", "2")  # four data micro-batches
    for key, value in options.items():
        conf.set_string(key, value)
    env = StreamExecutionEnvironment.get_execution_environment(conf, spark_session=spark)
    env.set_runtime_mode(RuntimeExecutionMode.STREAMING)
    return env


class LatestMax(KeyedProcessFunction):
    """Emits the key's running maximum on every record: idempotent output, as it reports."""

    def open(self, runtime_context):
        self.best = runtime_context.get_state(ValueStateDescriptor("best", Types.INT()))

    def process_element(self, value, ctx):
        best = max(self.best.value() or value[1], value[1])
        self.best.update(best)
        yield ctx.get_current_key(), best

    def is_output_idempotent(self):
        return True


class PassOn(KeyedProcessFunction):
    """Forwards its input (reports no idempotence: it does not buffer)."""

    def process_element(self, value, ctx):
        yield value


def final_per_key(records):
    latest = {}
    for key, value in records:
        latest[key] = value
    return latest


def test_long_interval_bounded_keyed_sum_emits_one_final_record_per_key(spark, capsys):
    two_batches = {"changeflow.source.rows-per-batch": "4"}  # state carried over; every key buffered at the end
    plain = environment(spark, **two_batches)
    unbuffered = list(plain.from_collection(ROWS, type_info=PAIR).key_by(lambda r: r[0]).sum(1)
                      .execute_and_collect())
    capsys.readouterr()
    env = environment(spark, **{"execution.max-flush-interval": LONG}, **two_batches)
    sums = env.from_collection(ROWS, type_info=PAIR).key_by(lambda r: r[0]).sum(1)
    sums.print("sum")
    # A keyed operator that does not buffer passes the end of input on to the ones below it.
    sums.key_by(lambda r: r[0]).process(PassOn()).print("passed")
    # A chain: the buffered sum feeds a stateless map and an idempotent KeyedProcessFunction.
    maxima = list(sums.map(lambda r: (r[0], r[1] * 10), output_type=PAIR).key_by(lambda r: r[0])
                  .process(LatestMax()).execute_and_collect())
    lines = capsys.readouterr().out.splitlines()
    printed = [line.split("> ", 1)[1] for line in lines if line.startswith("sum> ")]
    passed = [line.split("> ", 1)[1] for line in lines if line.startswith("passed> ")]
    assert len(unbuffered) == len(ROWS)
    final = final_per_key(unbuffered)
    # Every key once, with the value the unbuffered job ends with.
    assert sorted(printed) == sorted(f"({k},{v})" for k, v in final.items())  # Flink's tuple format
    assert sorted(passed) == sorted(str((k, v)) for k, v in final.items())  # no output type: Python repr
    assert sorted(maxima) == sorted((k, v * 10) for k, v in final.items())


def test_memory_buffer_only_flushes_every_micro_batch(spark):
    env = environment(spark, **{"execution.max-flush-interval": LONG, "execution.flush.memory-buffer-only": "true",
                                "changeflow.source.rows-per-batch": "4"})
    out = list(env.from_collection(ROWS, type_info=PAIR).key_by(lambda r: r[0]).reduce(
        lambda x, y: (x[0], x[1] + y[1])).execute_and_collect())
    # Micro-batches a1 b2 a3 c4 | a5 b6 d1 a2: each emits its keys' latest running sums, in input order.
    assert out == [("b", 2), ("a", 4), ("c", 4), ("b", 8), ("d", 1), ("a", 11)]


def test_a_job_reading_an_unbounded_stream_up_to_now_flushes_what_it_buffered(spark, tmp_path):
    import pandas as pd

    pd.DataFrame(ROWS, columns=["k", "v"]).to_parquet(tmp_path / "part-0.parquet")
    source = spark.readStream.schema("k string, v bigint").parquet(str(tmp_path))
    env = environment(spark, **{"execution.max-flush-interval": LONG})
    out = list(env.from_source(source).map(lambda r: (r.k, r.v), output_type=PAIR).key_by(lambda r: r[0])
               .sum(1).execute_and_collect())
    # The stream has no end of input: the job ends once it read what the stream holds, and
    # its flush run (runtime/spark/flush_signals.py) emits every key's latest sum, once.
    assert sorted(out) == sorted(final_per_key(list(environment(spark).from_collection(ROWS, type_info=PAIR)
                                                    .key_by(lambda r: r[0]).sum(1).execute_and_collect())).items())


def test_a_streaming_source_fed_over_time_shows_output_only_at_flush_points(spark):
    import os
    import shutil
    import tempfile

    import pandas as pd

    from changeflow.common import Row
    from changeflow.kernels.keyed.records import loads
    from changeflow.runtime.spark.stream_graph import GraphTranslation
    from changeflow.runtime.spark.streaming import StreamingSettings, StreamingTranslator
    from changeflow.plan.flush_policy import flush_policy
    from changeflow.plan.optimizer import optimize
    from changeflow.plan.stream_nodes import StreamJob

    workdir = tempfile.mkdtemp(prefix="ds-flush-test-")
    inbox = os.path.join(workdir, "inbox")
    os.makedirs(inbox)
    env = environment(spark, **{"execution.max-flush-interval": LONG})
    source = spark.readStream.schema("k string, v bigint").option("maxFilesPerTrigger", 1).parquet(inbox)
    sums = env.from_source(source).key_by(lambda r: r.k).reduce(lambda a, b: Row(k=a.k, v=a.v + b.v))
    settings = StreamingSettings(mini_batch=False, rows_per_batch=2, buckets=2, pages=64,
                                 flush=flush_policy(env.get_config()))
    job = optimize(StreamJob((sums._node,)), settings.planner())  # the translation reads a planned graph
    frame = GraphTranslation(StreamingTranslator(spark, settings, workdir)).frame(list(job.outputs))
    outputs: list[tuple[int, list]] = []

    def collect(batch, batch_id):
        values = [loads(bytes(v)) for v in batch.toPandas()["_value"]]
        if values:
            outputs.append((batch_id, sorted((r.k, r.v) for r in values)))

    saved = {k: spark.conf.get(k) for k in ("spark.sql.streaming.noDataMicroBatches.enabled",
                                             "spark.sql.streaming.numRecentProgressUpdates")}
    # Idle input is seen in a micro-batch without data (runtime/spark/flush.py).
    spark.conf.set("spark.sql.streaming.noDataMicroBatches.enabled", "true")
    spark.conf.set("spark.sql.streaming.numRecentProgressUpdates", "1000")
    query = (frame.writeStream.foreachBatch(collect).option("checkpointLocation", os.path.join(workdir, "cp"))
             .trigger(processingTime="500 milliseconds").start())
    files = [[("a", 1), ("b", 2), ("a", 3), ("a", 4)], [("b", 5), ("c", 6), ("b", 1)]]
    try:
        for i, rows in enumerate(files):
            seen = len(outputs)
            pd.DataFrame(rows, columns=["k", "v"]).to_parquet(os.path.join(inbox, f"part-{i}.parquet"))
            wait_for(lambda seen=seen: len(outputs) > seen, query)
        wait_for(lambda: outputs[-1][0] in {p["batchId"] for p in query.recentProgress}, query)
        progress = {p["batchId"]: p["numInputRows"] for p in query.recentProgress}
    finally:
        query.stop()
        for key, value in saved.items():
            spark.conf.set(key, value)
        shutil.rmtree(workdir, ignore_errors=True)
    data_batches = sorted(b for b, n in progress.items() if n > 0)
    assert len(data_batches) == 2
    # Nothing is emitted in a micro-batch with input: each file's updates are flushed in
    # the next micro-batch, which brought none (idle input), one record per updated key.
    assert [b for b, _ in outputs] == [b + 1 for b in data_batches]
    assert all(progress[b] == 0 for b, _ in outputs)
    assert [records for _, records in outputs] == [[("a", 8), ("b", 2)], [("b", 8), ("c", 6)]]


def wait_for(condition, query, limit_s: float = 300.0) -> None:
    """Wait until ``condition()`` holds (a liveness bound for a busy machine, not a timing assertion)."""
    import time

    deadline = time.monotonic() + limit_s
    while not condition():
        if query.exception() is not None:
            raise query.exception()
        if time.monotonic() > deadline:
            raise AssertionError("the streaming query produced no output in time")
        time.sleep(0.2)


def test_an_idempotent_keyed_process_function_whose_side_output_is_read_does_not_buffer(spark):
    from changeflow.datastream import OutputTag

    odd = OutputTag("odd", Types.STRING())

    class MaxAndOdd(LatestMax):
        def process_element(self, value, ctx):
            yield from super().process_element(value, ctx)
            if value[1] % 2:
                yield odd, f"{value[0]}{value[1]}"

    env = environment(spark, **{"execution.max-flush-interval": LONG})
    maxima = env.from_collection(ROWS, type_info=PAIR).key_by(lambda r: r[0]).process(MaxAndOdd(),
                                                                                     output_type=PAIR)
    out = list(maxima.map(str, output_type=Types.STRING()).union(maxima.get_side_output(odd)).execute_and_collect())
    # Flink emits side outputs at once: the operator does not buffer, so every record's running maximum comes out.
    assert sorted(out) == sorted([str(m) for m in [("a", 1), ("b", 2), ("a", 3), ("c", 4), ("a", 5), ("b", 6),
                                                   ("d", 1), ("a", 5)]] + ["a1", "a3", "a5", "d1"])
