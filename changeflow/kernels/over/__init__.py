"""OVER aggregation kernels (``agg(x) OVER (PARTITION BY ... ORDER BY t <frame>)``)."""

from changeflow.kernels.over.kernel import OverAggregate

__all__ = ["OverAggregate"]
