"""The sink upsert materializer kernel (SinkUpsertMaterializerV2, FLINK-38461 / FLIP-558); see :mod:`.kernel`."""

from changeflow.kernels.materializer.kernel import CONFLICTS, STRATEGIES, SinkUpsertMaterializer

__all__ = ["SinkUpsertMaterializer", "STRATEGIES", "CONFLICTS"]
