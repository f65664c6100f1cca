"""The DataStream job graph as the API builds it: the node classes of :mod:`changeflow.plan.stream_nodes`.

The nodes live in the plan layer, which the runtime translates without
importing the API; the API's modules name them through this module.
"""

from changeflow.plan.stream_nodes import (CoGroupNode, CoProcessNode, EventWindowNode, KeyedNode, KeyedProcessNode,
                                          KeyedReduceNode, LateDataNode, Node, Op, SideOutputNode, SourceNode,
                                          Stateless, TimestampsNode, UnionNode, WindowNode, set_name, set_uid)
from changeflow.plan.stream_walks import all_nodes, sources

__all__ = ["CoGroupNode", "CoProcessNode", "EventWindowNode", "KeyedNode", "KeyedProcessNode", "KeyedReduceNode",
           "LateDataNode", "Node", "Op", "SideOutputNode", "SourceNode", "Stateless", "TimestampsNode", "UnionNode",
           "WindowNode", "all_nodes", "set_name", "set_uid", "sources"]
