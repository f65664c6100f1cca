"""changeflow's own session carries its checkpoint settings, also for queries a user starts over to_spark()."""

from changeflow.runtime.spark.query_start import CHECKPOINT_SETTINGS


def test_changeflow_session_retains_few_micro_batches(spark):
    # A paged operator rewrites about its whole state per micro-batch: Spark's 100 retained
    # micro-batches made a checkpoint 30-120x the live state.
    for key, value in CHECKPOINT_SETTINGS.items():
        assert spark.conf.get(key) == value
