"""changeflow: Flink-style changelog stream processing on Apache Spark, in Python.

Front ends (``changeflow.table``) build logical plans; the planner (``changeflow.plan``)
infers changelog modes; pure kernels (``changeflow.kernels``) hold the operator logic;
``changeflow.runtime.spark`` runs it on Structured Streaming or Spark batch.
"""

__version__ = "0.1.0"
