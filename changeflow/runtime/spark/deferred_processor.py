"""What Spark pickles for a stateful operator: a light processor that loads the real one where it runs.

As a streaming query starts, Spark runs every ``transformWithStateInPandas``
operator's ``init`` once in a fresh Python process on the driver, only to learn
the state variables the processor declares. That process imports whatever
unpickling the processor imports: the kernel, pandas, most of changeflow, about
0.6 s per operator on the reference machine, paid at every query start (and a
query has a stateful operator per aggregation, join, rank, ...).

:class:`DeferredProcessor` is what Spark gets instead: it imports nothing but
pyspark's processor API, declares the state variables from a list made on the
driver when the query is translated, and unpickles the real processor (a
:class:`~.processor.KernelProcessor`) only on the first call that needs it, in
the executor's worker, handing it the declared state variables.
"""

from __future__ import annotations

import pickle
from typing import Any, Iterator

from pyspark import cloudpickle
from pyspark.sql.streaming.stateful_processor import StatefulProcessor, StatefulProcessorHandle


def declare_state(handle: StatefulProcessorHandle, variables: list[tuple[str, str, tuple]]) -> dict[str, Any]:
    """Declare ``variables`` ((``"map"`` or ``"value"``, name, schemas), in order) on ``handle``; by name."""
    states: dict[str, Any] = {}
    for kind, name, schemas in variables:
        declare = handle.getMapState if kind == "map" else handle.getValueState
        states[name] = declare(name, *schemas)
    return states


class DeferredProcessor(StatefulProcessor):
    """``processor`` (with ``state_variables()``, ``bind(handle, states)`` and ``time_mode``), loaded lazily."""

    def __init__(self, processor: Any) -> None:
        self.variables = processor.state_variables()
        self.time_mode = processor.time_mode
        self.payload = cloudpickle.dumps(processor)
        self._processor: Any = None

    def init(self, handle: StatefulProcessorHandle) -> None:
        self._handle = handle
        self._states = declare_state(handle, self.variables)
        self._processor = None

    def _loaded(self) -> Any:
        if self._processor is None:
            self._processor = pickle.loads(self.payload)
            self._processor.bind(self._handle, self._states)
        return self._processor

    def handleInputRows(self, key: Any, rows: Iterator[Any], timerValues: Any) -> Iterator[Any]:
        return self._loaded().handleInputRows(key, rows, timerValues)

    def handleExpiredTimer(self, key: Any, timerValues: Any, expiredTimerInfo: Any) -> Iterator[Any]:
        return self._loaded().handleExpiredTimer(key, timerValues, expiredTimerInfo)

    def close(self) -> None:
        if self._processor is not None:
            self._processor.close()
