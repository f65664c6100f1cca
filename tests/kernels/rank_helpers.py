"""Shared builders for the deduplicate and Top-N kernel tests."""

from __future__ import annotations

from dataclasses import dataclass, field

from changeflow.kernels.rank import InsertOnlyDeduplicate, RetractingDeduplicate, TopN
from changeflow.testing import KernelHarness, assert_changelog

DTYPES = {"k": object, "name": object, "v": "Int64"}


def top_n(end=3, *, start=1, rank_column="rn", insert_only=True, mini_batch=False, ascending=False,
          nulls_first=False, columns=("k", "name", "v")):
    """Top-N per ``k`` by ``v`` (DESC unless ``ascending``)."""
    return TopN(list(columns), ["k"], [("v", ascending, nulls_first)], start, end, rank_column,
                input_insert_only=insert_only, mini_batch=mini_batch)


def dedup(keep_last, mini_batch=False, retracting=False):
    """Deduplication per ``k``: the insert-only kernel, or with ``retracting`` the one over retracting input."""
    kernel = RetractingDeduplicate if retracting else InsertOnlyDeduplicate
    return kernel(["k", "name", "v"], ["k"], keep_last=keep_last, mini_batch=mini_batch)


@dataclass
class Scenario:
    """A named kernel test: batches in, the exact changelog out."""

    name: str
    kernel: object
    batches: list
    expected: list
    options: dict = field(default_factory=dict)

    def run(self):
        h = KernelHarness(self.kernel, ["k", "name", "v"], dtypes=DTYPES)
        out = []
        for batch in self.batches:
            out.extend(h.process(batch))
        assert_changelog(out, self.expected)


def ids(scenarios):
    return [s.name for s in scenarios]
