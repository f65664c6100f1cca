"""Pure operator kernels: changelog batches in, changelog batches out, state passed explicitly.

Kernels import pandas and numpy only (never pyspark), so they run and are tested
without Spark; ``changeflow.runtime.spark`` calls them inside
``transformWithStateInPandas``.
"""

from changeflow.kernels.state import InMemoryKeyedState, KeyedState

__all__ = ["InMemoryKeyedState", "KeyedState"]
