"""A PyFlink program that sets checkpointing, re-partitions, projects and sets task hints runs on Spark
with PyFlink 2.3's results (recorded: the same program under PyFlink 2.3, with and without
enable_checkpointing; PyFlink's partition_custom fails in a local job, so it is not part of it)."""

import pytest

from changeflow.common import Configuration, Types
from changeflow.datastream import CheckpointingMode, RuntimeExecutionMode, StreamExecutionEnvironment

ROWS = [("a", 1, 10), ("b", 2, 20), ("a", 3, 30), ("c", 4, 40)]
# PyFlink 2.3's output of this program, sorted.
FLINK = {RuntimeExecutionMode.STREAMING: [("a", 10), ("a", 40), ("b", 20), ("c", 40)],
         RuntimeExecutionMode.BATCH: [("a", 40), ("b", 20), ("c", 40)]}


@pytest.mark.parametrize("mode", [RuntimeExecutionMode.STREAMING, RuntimeExecutionMode.BATCH])
def test_checkpointing_partitioning_and_hints_leave_flinks_results(spark, mode):
    conf = Configuration().set("changeflow.state.buckets", "2")
    env = StreamExecutionEnvironment.get_execution_environment(conf, spark_session=spark)
    env.set_runtime_mode(mode)
    env.enable_checkpointing(1000, CheckpointingMode.AT_LEAST_ONCE)
    env.set_max_parallelism(128).disable_operator_chaining()
    rows = env.from_collection(ROWS, type_info=Types.TUPLE([Types.STRING(), Types.INT(), Types.INT()]))
    projected = rows.rebalance().project(0, 2)
    projected.start_new_chain().disable_chaining().slot_sharing_group("g").set_description("pairs")
    pairs = projected.shuffle().partition_custom(lambda key, n: 0, lambda r: r[0])
    out = pairs.key_by(lambda r: r[0]).sum(1).forward().rescale()
    with out.execute_and_collect() as records:
        assert sorted(records) == FLINK[mode]
    assert pairs.get_type() == Types.TUPLE([Types.STRING(), Types.INT()])
