"""Aggregates that must remember a collection per key to support retraction.

MIN/MAX with retraction keep a value -> count multiset (Flink's
MaxWithRetractAggFunction): retracting the current extreme falls back to the
next surviving value. FIRST_VALUE/LAST_VALUE and LISTAGG with retraction keep
the surviving values in arrival order; retracting ``v`` removes its earliest
surviving occurrence (Flink removes ``orderList.get(0)`` / ``list.remove(v)``).
COLLECT keeps a value -> count multiset and returns it. JSON_ARRAYAGG and
JSON_OBJECTAGG keep their items and members as LISTAGG keeps values (:mod:`.json_aggs`).

These fold with a Python loop per row: a value's fate depends on everything
retracted before it, which has no cheap vectorised form. State is exploded to
one row per multiset entry (``_value``, ``_count``) or list element
(``_pos``, ``_value``) so it stays plain columns.
"""

from __future__ import annotations

import contextlib
from typing import Any

import numpy as np
import pandas as pd

from changeflow.kernels.aggregate.base import CODE, Accumulator, Folded, StateView
from changeflow.kernels.aggregate.fold import Fold
from changeflow.kernels.aggregate.json_aggs import JSON_AGGREGATES, JsonArrayAgg, JsonObjectAgg, empty_result
from changeflow.kernels.aggregate.values import Values, from_series, to_array
from changeflow.kernels.frames import column


class _Multiset:
    """value -> count; counts may go negative on unmatched retractions, as in Flink."""

    def __init__(self, counts: dict | None = None) -> None:
        self.counts: dict[Any, int] = counts if counts is not None else {}

    def add(self, value: Any, delta: int) -> int:
        count = self.counts.get(value, 0) + delta
        if count == 0:
            self.counts.pop(value, None)
        else:
            self.counts[value] = count
        return count

    def entries(self) -> list[tuple[Any, int]]:
        return list(self.counts.items())


class _Extreme(_Multiset):
    """MIN/MAX with retraction: the best value among those with a positive count."""

    def __init__(self, is_max: bool, counts: dict | None = None) -> None:
        super().__init__(counts)
        self.is_max = is_max
        self.best = self._search()

    def _better(self, a: Any, b: Any) -> bool:
        return a > b if self.is_max else a < b

    def _search(self) -> Any:
        alive = [v for v, c in self.counts.items() if c > 0]
        if not alive:
            return None
        return max(alive) if self.is_max else min(alive)

    def accumulate(self, value: Any) -> None:
        if self.add(value, 1) > 0 and (self.best is None or self._better(value, self.best)):
            self.best = value

    def retract(self, value: Any) -> None:
        # Only losing the current extreme needs a scan of the remaining values.
        if self.add(value, -1) <= 0 and self.best is not None and value == self.best:
            self.best = self._search()

    def value(self) -> Any:
        return self.best


class _Collect(_Multiset):
    """COLLECT: the multiset itself, as a dict value -> count."""

    def accumulate(self, value: Any) -> None:
        self.add(value, 1)

    def retract(self, value: Any) -> None:
        self.add(value, -1)

    def value(self) -> dict:
        return dict(self.counts)


class _Arrivals:
    """Surviving values in arrival order (FIRST_VALUE, LAST_VALUE, LISTAGG with retraction)."""

    def __init__(self, function: str, separator: str, values: list | None = None) -> None:
        self.function = function
        self.separator = separator
        self.values: list[Any] = values if values is not None else []

    def accumulate(self, value: Any) -> None:
        self.values.append(value)

    def retract(self, value: Any) -> None:
        # The earliest surviving occurrence; retracting a value never accumulated changes nothing here
        # (Flink keeps it aside).
        with contextlib.suppress(ValueError):
            self.values.remove(value)

    def value(self) -> Any:
        if not self.values:
            return None
        if self.function == "first_value":
            return self.values[0]
        if self.function == "last_value":
            return self.values[-1]
        return self.separator.join(self.values)


class PerKeyAccumulator(Accumulator):
    """Folds a retractable collection-based aggregate key by key, row by row."""

    needs_order = True
    needs_grouping = True

    def __init__(self, call) -> None:
        super().__init__(call)
        self._multiset = call.function in ("min", "max", "collect")
        self._table = f"agg.{call.output}"

    @property
    def tables(self) -> tuple[str, ...]:
        return (self._table,)

    def _new(self, content: Any = None):
        f = self.call.function
        if f in ("min", "max"):
            return _Extreme(f == "max", content)
        if f == "collect":
            return _Collect(content)
        if f in JSON_AGGREGATES:
            return JsonArrayAgg(content) if f.startswith("json_arrayagg") else JsonObjectAgg(f, content)
        return _Arrivals(f, self.call.separator, content)

    def fold(self, fold: Fold, arg: Values, sign: np.ndarray, state: StateView) -> Folded:
        loaded = self._load(state)
        before = self._values([loaded[k].value() if k in loaded else None for k in range(fold.keys.size)])
        record = not fold.mini_batch
        running: list[Any] = [None] * fold.size if record else []
        finals: dict[int, Any] = {}
        g = fold.grouping()
        life = g.lifetimes
        # Python lists: indexing them is several times faster than numpy scalars.
        data, valid, signs = arg.data.tolist(), arg.valid.tolist(), sign.tolist()
        for seg in range(life.count):
            key = int(g.life_key[seg])
            if g.life_from_state[seg] and key in loaded:
                acc = loaded[key]
            else:
                acc = self._new()
            start, stop = int(life.starts[seg]), int(life.starts[seg] + life.lengths[seg])
            for i in range(start, stop):
                s = signs[i]
                if s and valid[i]:
                    if s > 0:
                        acc.accumulate(data[i])
                    else:
                        acc.retract(data[i])
                if record:
                    running[i] = acc.value()
            finals[key] = acc  # later lifetimes of the key replace earlier ones
        after = self._values([finals[k].value() if k in finals else None for k in range(fold.keys.size)])
        return Folded(
            before=before,
            after=after,
            running=self._values(running) if record else None,
            tables={self._table: self._rows(finals, fold.alive)},
        )

    def _values(self, items: list[Any]) -> Values:
        data = _objects(items)
        if self.call.function == "collect":
            # COLLECT is NOT NULL: a key without values has the empty multiset.
            return Values(_objects([{} if v is None else v for v in items]), np.ones(len(items), dtype=bool))
        valid = np.fromiter((v is not None for v in items), dtype=bool, count=len(items))
        if self.call.function in JSON_AGGREGATES:
            # NOT NULL as well: a key whose items were all left out (or none stored) shows [] / {}.
            empty = empty_result(self.call.function)
            return Values(_objects([empty if v is None else v for v in items]), np.ones(len(items), dtype=bool))
        if self.call.function == "listagg":
            return Values(data, valid)
        return _typed(data, valid, self.arg_type)

    def _load(self, state: StateView) -> dict[int, Any]:
        frame, codes = state.table(self._table)
        if len(frame) == 0:
            return {}
        values = from_series(column(frame, "_value"), self.arg_type).data
        out: dict[int, Any] = {}
        if self._multiset:
            counts: dict[int, dict] = {}
            for code, value, count in zip(codes.tolist(), _plain(values), frame["_count"].tolist(), strict=True):
                counts.setdefault(code, {})[value] = int(count)
            for code, content in counts.items():
                out[code] = self._new(content)
        else:
            order = np.lexsort((frame["_pos"].to_numpy(), codes))
            lists: dict[int, list] = {}
            for code, value in zip(codes[order].tolist(), _plain(values[order]), strict=True):
                lists.setdefault(code, []).append(value)
            for code, content in lists.items():
                out[code] = self._new(content)
        return out

    def _rows(self, finals: dict[int, Any], alive: np.ndarray) -> pd.DataFrame:
        codes, values, extra = [], [], []
        for code, acc in finals.items():
            if not alive[code]:
                continue
            if self._multiset:
                for value, count in acc.entries():
                    codes.append(code)
                    values.append(value)
                    extra.append(count)
            else:
                for pos, value in enumerate(acc.values):
                    codes.append(code)
                    values.append(value)
                    extra.append(pos)
        type_ = self.arg_type
        column = to_array(_typed(_objects(values), np.ones(len(values), dtype=bool), type_), type_)
        codes, extra = np.asarray(codes, dtype=np.intp), np.asarray(extra, dtype=np.int64)
        if self._multiset:
            return pd.DataFrame({CODE: codes, "_value": column, "_count": extra})
        return pd.DataFrame({CODE: codes, "_pos": extra, "_value": column})


def _plain(values: np.ndarray) -> list:
    """Python scalars (numpy scalars hash and compare the same, but print and pickle worse)."""
    return values.tolist()


def _objects(items: list[Any]) -> np.ndarray:
    """An object array of ``items`` (never unpacking list or dict items into dimensions)."""
    return np.fromiter(items, dtype=object, count=len(items))


def _typed(data: np.ndarray, valid: np.ndarray, type_) -> Values:
    """Object values turned into the numeric array the type computes in."""
    out = Values.nulls(len(data), type_)
    out.valid[:] = valid
    if out.data.dtype == object:
        out.data[valid] = data[valid]
    else:
        out.data[valid] = np.array(data[valid].tolist(), dtype=out.data.dtype)
    return out
