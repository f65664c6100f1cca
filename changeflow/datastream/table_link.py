"""What the Table API's ``StreamTableEnvironment`` needs of a DataStream environment and its streams.

The two APIs share one configuration and one engine (one SparkSession), and a
table can read a DataStream's graph node. These functions are that interface,
so the ``table`` package never reads the DataStream classes' private members.
"""

from __future__ import annotations

from typing import Any

from changeflow.common.configuration import Configuration
from changeflow.datastream.data_stream import DataStream
from changeflow.datastream.environment import RuntimeExecutionMode, StreamExecutionEnvironment
from changeflow.datastream import graph
from changeflow.plan.stream_caches import CacheRegistry
from changeflow.runtime.engine import Engine


def share_configuration(env: StreamExecutionEnvironment, config: Configuration) -> None:
    """Make ``env`` read and write ``config`` (the table environment's) from now on.

    The engine is rebuilt on it when next needed, so both APIs run with the same keys.
    """
    env.get_config().share(config)
    env._engine_instance = None


def spark_session(env: StreamExecutionEnvironment) -> Any:
    """The SparkSession the user gave ``env`` (None: changeflow's own)."""
    return env._spark_session


def is_batch(env: StreamExecutionEnvironment) -> bool:
    """Whether ``env`` runs in ``RuntimeExecutionMode.BATCH``."""
    return env._mode is RuntimeExecutionMode.BATCH


def engine(env: StreamExecutionEnvironment) -> Engine:
    """The engine running ``env``'s jobs (both APIs share it)."""
    return env._engine()


def caches(env: StreamExecutionEnvironment) -> CacheRegistry:
    """The ``DataStream.cache()`` results ``env``'s jobs created."""
    return env._caches


def environment_of(stream: DataStream) -> StreamExecutionEnvironment:
    """The environment ``stream`` was built in."""
    return stream._env


def node_of(stream: DataStream) -> graph.Node:
    """``stream``'s node in its job graph."""
    return stream._node
