"""Kernels of the DataStream API's keyed operators (no Spark import).

Records travel as pickled Python values with an order stamp (``_seq``, ``_sub``)
(:mod:`.records`); a keyed kernel folds a bucket's records in stamp order,
keeping per-key state in a :class:`~changeflow.kernels.state.KeyedState`.
"""

from changeflow.kernels.keyed.process import KeyedProcess
from changeflow.kernels.keyed.reduce import KeyedReduce
from changeflow.kernels.keyed.records import UserFunctionError

__all__ = ["KeyedProcess", "KeyedReduce", "UserFunctionError"]
