"""State rows a batch reads and writes: O(records) for MAP, O(history) for VALUE (the strategies' cost model)."""

import pytest

from changeflow.kernels.materializer import SinkUpsertMaterializer
from changeflow.kernels.state import InMemoryKeyedState
from changeflow.testing.harness import KernelHarness, delete_record, insert_record

COLS = ["id", "v"]


class CountingState(InMemoryKeyedState):
    """Counts rows loaded and stored, weighting a list value by its length."""

    def __init__(self):
        super().__init__()
        self.rows = 0

    def _weight(self, frame):
        if "history" in frame.columns:
            return sum(len(h) for h in frame["history"])
        return len(frame)

    def load(self, table, keys):
        frame = super().load(table, keys)
        self.rows += self._weight(frame)
        return frame

    def store(self, table, keys, rows):
        self.rows += self._weight(rows)
        super().store(table, keys, rows)


def rows_touched(strategy, history):
    state = CountingState()
    h = KernelHarness(SinkUpsertMaterializer(["id"], COLS, strategy=strategy), COLS, state=state)
    h.process([insert_record(1, i) for i in range(history)])
    state.rows = 0
    # Retract a middle row and the latest row, insert two: 4 records.
    h.process([delete_record(1, history // 2), delete_record(1, history - 1), insert_record(1, -1),
               insert_record(1, -2)])
    return state.rows


@pytest.mark.parametrize("strategy", ["MAP", "ADAPTIVE"])
def test_map_touches_the_same_rows_whatever_the_history(strategy):
    assert rows_touched(strategy, 200) == rows_touched(strategy, 3000)
    assert rows_touched(strategy, 3000) < 40


@pytest.mark.parametrize("strategy", ["LEGACY", "VALUE"])
def test_value_reads_and_writes_the_whole_history(strategy):
    assert rows_touched(strategy, 3000) >= 2 * 3000
