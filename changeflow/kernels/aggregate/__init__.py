"""Group aggregation (``GROUP BY``) over changelogs, with Flink's semantics.

>>> from changeflow.kernels.aggregate import AggCall, GroupAggregate, LocalGroupAggregate, result_type
"""

from changeflow.kernels.aggregate.functions import FUNCTIONS, AggCall, result_type
from changeflow.kernels.aggregate.group_agg import GroupAggregate
from changeflow.kernels.aggregate.local import LocalGroupAggregate

__all__ = ["AggCall", "FUNCTIONS", "GroupAggregate", "LocalGroupAggregate", "result_type"]
