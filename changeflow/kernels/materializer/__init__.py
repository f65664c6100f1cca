"""The sink upsert materializer kernel (FLIP-544); see :mod:`.kernel`."""

from changeflow.kernels.materializer.kernel import CONFLICTS, STRATEGIES, SinkUpsertMaterializer

__all__ = ["SinkUpsertMaterializer", "STRATEGIES", "CONFLICTS"]
