"""Kernels of windows that fire at end of input (FLIP-331), run with batch algorithms (no Spark import).

The Spark runtime sorts an operator's whole input by key and hands the kernels
*complete groups* (:mod:`.groups`); :mod:`.evaluate` folds or evaluates each
group once: no per-record window assignment or trigger call.
"""

from changeflow.kernels.window.co_group import CoGroupKernel
from changeflow.kernels.window.evaluate import PartialFold, WindowKernel, WindowSpec
from changeflow.kernels.window.groups import complete_groups, group_bounds

__all__ = ["CoGroupKernel", "PartialFold", "WindowKernel", "WindowSpec", "complete_groups", "group_bounds"]
