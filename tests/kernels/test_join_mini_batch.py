"""Mini-batch streaming join: a batch is one bundle, folded per join key before joining (FLIP-415)."""

from __future__ import annotations

import pytest

from changeflow.table.expressions import col
from changeflow.testing.harness import format_changes

from join_helpers import left, make_join, right

SCENARIOS = [
    # (name, join type, unique keys (left, right), bundles, expected changelog of the last bundle)
    ("a row inserted and deleted within a bundle produces nothing", "LEFT", (None, None),
     [[left("+I", 1, "a"), left("-D", 1, "a")]],
     []),
    ("an insert cancels the most recent retraction of the same row", "INNER", (None, None),
     [[left("+I", 1, "a"), right("+I", 1, "eu")], [left("-D", 1, "a"), left("+I", 1, "a")]],
     []),
    ("left join: the right bundle goes first, so a match in the same bundle never pads", "LEFT", (None, None),
     [[left("+I", 1, "a"), right("+I", 1, "eu")]],
     ["+I[1, a, 1, eu]"]),
    ("right join: the left bundle goes first", "RIGHT", (None, None),
     [[right("+I", 1, "eu"), left("+I", 1, "a")]],
     ["+I[1, a, 1, eu]"]),
    ("full join: right first, so the right row is padded and then un-padded", "FULL", (None, None),
     [[left("+I", 1, "a"), right("+I", 1, "eu")]],
     ["+I[null, null, 1, eu]", "-D[null, null, 1, eu]", "+I[1, a, 1, eu]"]),
    ("without a unique key an update stays a delete and an insert of different rows", "FULL", (None, None),
     [[left("+I", 1, "a"), right("+I", 1, "eu")], [left("-U", 1, "a"), left("+U", 1, "b")]],
     ["-D[1, a, 1, eu]", "+I[null, null, 1, eu]", "-D[null, null, 1, eu]", "+I[1, b, 1, eu]"]),
    ("with a unique key an update suppresses the other side's padding", "FULL", (["k"], None),
     [[left("+I", 1, "a"), right("+I", 1, "eu")], [left("-U", 1, "a"), left("+U", 1, "b")]],
     ["-D[1, a, 1, eu]", "+I[1, b, 1, eu]"]),
    ("with a unique key the last of several updates wins", "INNER", (["k"], None),
     [[left("+I", 1, "a"), right("+I", 1, "eu")],
      [left("-U", 1, "a"), left("+U", 1, "b"), left("-U", 1, "b"), left("+U", 1, "c")]],
     ["-U[1, a, 1, eu]", "+U[1, c, 1, eu]"]),
    ("with a unique key an insert then delete in one bundle is nothing", "FULL", (None, ["k0"]),
     [[left("+I", 1, "a")], [right("+I", 1, "eu"), right("-D", 1, "eu")]],
     []),
    ("null keys are folded too", "FULL", (None, None),
     [[left("+I", None, "a"), left("-D", None, "a"), right("+I", None, "x")]],
     ["+I[null, null, null, x]"]),
]


@pytest.mark.parametrize("name,join_type,unique,bundles,expected", SCENARIOS, ids=[s[0] for s in SCENARIOS])
def test_mini_batch_scenario(name, join_type, unique, bundles, expected):
    h = make_join(join_type, mini_batch=True, left_unique_key=unique[0], right_unique_key=unique[1])
    out = []
    for bundle in bundles:
        out = h.process(bundle)
    assert format_changes(out) == expected


def test_mini_batch_output_stamps_follow_emission_order():
    # The right bundle is processed first although its rows come later in the source:
    # stamps must still sort into the emission order for the next operator.
    h = make_join("FULL", mini_batch=True)
    out = h.process_frame(h.frame([left("+I", 1, "a"), right("+I", 1, "eu")]))
    assert out.sort_values(["_seq", "_sub"]).index.tolist() == list(range(len(out)))


def test_an_update_that_changes_the_matches_still_pads_the_other_side():
    # Flink 2.3 suppresses the padding for every row a -U/+U pair touches (its
    # FLINK-40841 TODO), which loses +I[null, 1, eu] here; changeflow emits it.
    h = make_join("FULL", col("v") < col("v0"), mini_batch=True, left_unique_key=["k"])
    h.process([left("+I", 1, "a"), right("+I", 1, "eu")])
    out = h.process([left("-U", 1, "a"), left("+U", 1, "z")])
    assert format_changes(out) == ["-D[1, a, 1, eu]", "+I[1, z, null, null]", "+I[null, null, 1, eu]"]


def test_an_update_that_gains_a_match_removes_the_padding():
    h = make_join("FULL", col("v") < col("v0"), mini_batch=True, left_unique_key=["k"])
    h.process([left("+I", 1, "z"), right("+I", 1, "eu")])
    out = h.process([left("-U", 1, "z"), left("+U", 1, "a")])
    assert format_changes(out) == ["-D[1, z, null, null]", "-D[null, null, 1, eu]", "+I[1, a, 1, eu]"]
