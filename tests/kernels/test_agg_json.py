"""JSON_ARRAYAGG and JSON_OBJECTAGG in the group aggregate kernel, with retraction.

The kernel sees what the front ends project (kernels/aggregate/json_aggs.py): an item as a
one-element JSON array (``[]`` for a NULL left out), a member as a ``["key",value]`` pair.
The Flink goldens (conformance/json_cases.py) check the whole path; these check the kernel's
rules one by one, and a property checks the streaming result against a batch computation.
"""

from __future__ import annotations

import json

import pytest
from group_agg_helpers import STRING, Scenario, call, harness, ids
from hypothesis import HealthCheck, given, settings, strategies as st

from changeflow.kernels.aggregate.json_aggs import json_array_of, json_object_of
from changeflow.testing import (
    delete_record as D,
    insert_record as I,
    materialize,
    update_after_record as UA,
    update_before_record as UB,
)

ARRAY = [call("json_arrayagg_absent_on_null", STRING, out="a")]
ARRAY_NULLS = [call("json_arrayagg_null_on_null", STRING, out="a")]
OBJECT = [call("json_objectagg_null_on_null", STRING, out="o")]
OBJECT_ABSENT = [call("json_objectagg_absent_on_null", STRING, out="o")]

SCENARIOS = [
    Scenario("arrayagg - arrival order, a retraction removes the earliest occurrence", ARRAY,
             [[I("g", '["x"]'), I("g", "[2]"), I("g", '["x"]'), D("g", '["x"]')]],
             [I("g", '["x"]'), UB("g", '["x"]'), UA("g", '["x",2]'), UB("g", '["x",2]'), UA("g", '["x",2,"x"]'),
              UB("g", '["x",2,"x"]'), UA("g", '[2,"x"]')]),
    Scenario("arrayagg - a NULL left out still makes the group, which shows []", ARRAY,
             [[I("g", "[]"), I("g", "[1]"), D("g", "[1]")]],
             [I("g", "[]"), UB("g", "[]"), UA("g", "[1]"), UB("g", "[1]"), UA("g", "[]")]),
    Scenario("arrayagg - NULL ON NULL keeps null items, and retracts them", ARRAY_NULLS,
             [[I("g", "[null]"), I("g", "[1]")], [D("g", "[null]")]],
             [I("g", "[null]"), UB("g", "[null]"), UA("g", "[null,1]"), UB("g", "[null,1]"), UA("g", "[1]")]),
    Scenario("objectagg - members sorted by key, nested JSON kept, state across batches", OBJECT,
             [[I("g", '["b",1]')], [I("g", '["a",{"x":[2]}]')], [D("g", '["b",1]')]],
             [I("g", '{"b":1}'), UB("g", '{"b":1}'), UA("g", '{"a":{"x":[2]},"b":1}'),
              UB("g", '{"a":{"x":[2]},"b":1}'), UA("g", '{"a":{"x":[2]}}')]),
    Scenario("objectagg - a NULL value is a null member and can be retracted (Flink cannot)", OBJECT,
             [[I("g", '["a",null]'), I("g", '["b",1]'), D("g", '["a",null]'), I("g", '["a",3]')]],
             [I("g", '{"a":null}'), UB("g", '{"a":null}'), UA("g", '{"a":null,"b":1}'), UB("g", '{"a":null,"b":1}'),
              UA("g", '{"b":1}'), UB("g", '{"b":1}'), UA("g", '{"a":3,"b":1}')]),
    Scenario("objectagg - ABSENT ON NULL leaves the member out", OBJECT_ABSENT,
             [[I("g", '["a",null]'), I("g", '["b","y"]')]],
             [I("g", "{}"), UB("g", "{}"), UA("g", '{"b":"y"}')]),
    Scenario("objectagg - an update of a member's value", OBJECT,
             [[I("g", '["j",0]'), I("g", '["k",1]'), UB("g", '["k",1]'), UA("g", '["k",2]')]],
             [I("g", '{"j":0}'), UB("g", '{"j":0}'), UA("g", '{"j":0,"k":1}'), UB("g", '{"j":0,"k":1}'),
              UA("g", '{"j":0}'), UB("g", '{"j":0}'), UA("g", '{"j":0,"k":2}')]),
]


@pytest.mark.parametrize("scenario", SCENARIOS, ids=ids(SCENARIOS))
def test_scenario(scenario):
    scenario.run()


@pytest.mark.parametrize("scenario", SCENARIOS, ids=ids(SCENARIOS))
def test_scenario_as_one_row_bundles(scenario):
    scenario.as_one_row_bundles().run()


def test_a_key_twice_fails_with_flinks_message():
    with pytest.raises(ValueError, match="Key 'a' is already present. Duplicate keys are not allowed in "
                                         "JSON_OBJECTAGG"):
        harness(OBJECT).process([I("g", '["a",1]'), I("g", '["a",2]')])


def test_a_key_twice_fails_even_when_absent_on_null_drops_the_second():
    with pytest.raises(ValueError, match="Key 'a' is already present"):
        harness(OBJECT_ABSENT).process([I("g", '["a",1]'), I("g", '["a",null]')])


def test_a_null_key_is_named():
    with pytest.raises(ValueError, match=r"JSON_OBJECTAGG_NULL_ON_NULL: a key is NULL \(the pair \[null,1\]\)"):
        harness(OBJECT).process([I("g", "[null,1]")])


def test_keys_with_escapes_are_written_as_rendered():
    assert json_object_of(['["q\\"uote",1]', '["a\\u00e9",2]'], "json_objectagg_null_on_null") == \
        '{"a\\u00e9":2,"q\\"uote":1}'


# --- property: streaming, materialized, equals the batch result ------------------------------------

ITEMS = st.sampled_from(['["x"]', '["y"]', "[1]", "[null]", "[]", '[{"n":1}]'])
GROUPS = ["g", "h"]


@st.composite
def array_changelogs(draw):
    """Inserts, and deletes of surviving rows, of items per group; cut into random batches."""
    survivors: list[tuple] = []
    records = []
    for _ in range(draw(st.integers(1, 20))):
        if survivors and draw(st.booleans()):
            row = survivors.pop(draw(st.integers(0, len(survivors) - 1)))
            records.append(D(*row))
        else:
            row = (draw(st.sampled_from(GROUPS)), draw(ITEMS))
            survivors.append(row)
            records.append(I(*row))
    return records, draw(st.lists(st.integers(1, 5), min_size=1, max_size=6))


@st.composite
def object_changelogs(draw):
    """Inserts of pairs with keys unique among a group's surviving rows, and deletes of survivors."""
    survivors: list[tuple] = []
    records = []
    for _ in range(draw(st.integers(1, 20))):
        if survivors and draw(st.booleans()):
            row = survivors.pop(draw(st.integers(0, len(survivors) - 1)))
            records.append(D(*row))
            continue
        group, key = draw(st.sampled_from(GROUPS)), draw(st.sampled_from("abcd"))
        if any(g == group and json.loads(p)[0] == key for g, p in survivors):
            continue
        row = (group, json.dumps([key, draw(st.sampled_from([None, 1, "v", [2]]))], separators=(",", ":")))
        survivors.append(row)
        records.append(I(*row))
    return records, draw(st.lists(st.integers(1, 5), min_size=1, max_size=6))


def _run(calls, records, cuts, mini_batch):
    h = harness(calls, mini_batch=mini_batch)
    out, i = [], 0
    while i < len(records):
        size = cuts[len(out) % len(cuts)]
        out.extend(h.process(records[i:i + size]))
        i += size
    return materialize(out)


def _batch(records, build):
    survivors: dict[str, list[str]] = {}
    for r in records:
        group, text = r[0], r[1]
        if r.get_row_kind().is_retraction():
            survivors[group].remove(text)  # the earliest occurrence, as the kernel
        else:
            survivors.setdefault(group, []).append(text)
    return {(g, build(texts)) for g, texts in survivors.items() if texts}


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(array_changelogs(), st.booleans())
def test_arrayagg_streaming_equals_batch(changelog, mini_batch):
    records, cuts = changelog
    for calls in (ARRAY, ARRAY_NULLS):
        got = {tuple(row) for row in _run(calls, records, cuts, mini_batch)}
        assert got == _batch(records, json_array_of)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(object_changelogs(), st.booleans())
def test_objectagg_streaming_equals_batch(changelog, mini_batch):
    records, cuts = changelog
    for calls in (OBJECT, OBJECT_ABSENT):
        function = calls[0].function
        got = {tuple(row) for row in _run(calls, records, cuts, mini_batch)}
        assert got == _batch(records, lambda pairs, f=function: json_object_of(pairs, f))
