"""The flush interval (FLIP-365) for DataStream keyed operators end to end on Spark (few queries: each costs seconds)."""

import sys
from collections import Counter

import pytest
from pyspark import cloudpickle

from changeflow.common import Configuration, Types
from changeflow.datastream import KeyedProcessFunction, RuntimeExecutionMode, StreamExecutionEnvironment
from changeflow.datastream import ValueStateDescriptor

cloudpickle.register_pickle_by_value(sys.modules[__name__])

ROWS = [("a", 1), ("b", 2), ("a", 3), ("c", 4), ("a", 5), ("b", 6), ("d", 1), ("a", 2)]
PAIR = Types.TUPLE([Types.STRING(), Types.INT()])


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


def final_per_key(records):
    latest = {}
    for key, value in records:
        latest[key] = value
    return latest


def test_long_interval_bounded_keyed_sum_emits_one_final_record_per_key(spark, capsys):
    plain = environment(spark)
    unbuffered = list(plain.from_collection(ROWS, type_info=PAIR).key_by(lambda r: r[0]).sum(1)
                      .execute_and_collect())
    capsys.readouterr()
    env = environment(spark, **{"execution.max-flush-interval": "2 min"})
    sums = env.from_collection(ROWS, type_info=PAIR).key_by(lambda r: r[0]).sum(1)
    sums.print("sum")
    # A chain: the buffered sum feeds a stateless map and an idempotent KeyedProcessFunction.
    maxima = list(sums.map(lambda r: (r[0], r[1] * 10), output_type=PAIR).key_by(lambda r: r[0])
                  .process(LatestMax()).execute_and_collect())
    printed = [line.split("> ", 1)[1] for line in capsys.readouterr().out.splitlines() if line.startswith("sum> ")]
    assert len(unbuffered) == len(ROWS)
    final = final_per_key(unbuffered)
    # Every key once, with the value the unbuffered job ends with.
    assert sorted(printed) == sorted(f"({k},{v})" for k, v in final.items())  # Flink's tuple format
    assert sorted(maxima) == sorted((k, v * 10) for k, v in final.items())


def test_memory_buffer_only_flushes_every_micro_batch(spark):
    env = environment(spark, **{"execution.max-flush-interval": "2 min", "execution.flush.memory-buffer-only": "true",
                                "changeflow.source.rows-per-batch": "4"})
    out = list(env.from_collection(ROWS, type_info=PAIR).key_by(lambda r: r[0]).reduce(
        lambda x, y: (x[0], x[1] + y[1])).execute_and_collect())
    # Micro-batches a1 b2 a3 c4 | a5 b6 d1 a2: each emits its keys' latest running sums, in input order.
    assert out == [("b", 2), ("a", 4), ("c", 4), ("b", 8), ("d", 1), ("a", 11)]
