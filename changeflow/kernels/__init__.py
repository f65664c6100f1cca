"""Pure operator kernels: changelog batches in, changelog batches out, state passed explicitly.

Kernels import pandas and numpy only (never pyspark, never an API class), so they
run and are tested without Spark. What a host may call on a kernel is written
down in :mod:`changeflow.kernels.contract`; ``changeflow.runtime.spark`` hosts
them inside ``transformWithStateInPandas``, ``changeflow.testing`` in memory.
"""

from changeflow.kernels.contract import HostClock, Kernel, KernelBase, WrappingKernel
from changeflow.kernels.state import InMemoryKeyedState, KeyedState

__all__ = ["HostClock", "InMemoryKeyedState", "Kernel", "KernelBase", "KeyedState", "WrappingKernel"]
