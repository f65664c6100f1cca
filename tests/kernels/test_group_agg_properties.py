"""Property tests: the streaming changelog of the kernel, materialized, equals the batch result.

Random changelogs hold inserts, deletes and update pairs of rows that are present,
plus stray retractions for keys never inserted (which Flink ignores). They are
cut into random batches and fed with and without mini-batch. The reference is
plain Python over the rows that survive; the order-sensitive functions follow
Flink's definitions in a straightforward sequential model: FIRST_VALUE,
LAST_VALUE and LISTAGG keep a list (a retraction removes the earliest surviving
occurrence of its value), VAR/STDDEV run Welford's M2 update in arrival order.
"""

from __future__ import annotations

from collections import Counter

import numpy as np
from hypothesis import HealthCheck, given, settings, strategies as st

from changeflow.common.types import DataTypes as T
from changeflow.kernels.aggregate import AggCall, GroupAggregate
from changeflow.kernels.aggregate.functions import variance_value
from changeflow.testing import (
    KernelHarness,
    assert_changelog,
    delete_record,
    insert_record,
    materialize,
    update_after_record,
    update_before_record,
)

COLUMNS = ["k", "x", "s", "d"]
DTYPES = {"k": object, "x": "Int64", "s": object, "d": "Float64"}
X, S, D = T.BIGINT(), T.STRING(), T.DOUBLE()


def agg(function, arg=None, arg_type=None, distinct=False):
    name = f"{function}_{arg or 'star'}{'_distinct' if distinct else ''}"
    return AggCall(function, arg, arg_type, name, distinct=distinct, separator="/")


CALLS = [
    agg("count_star"), agg("count", "x", X), agg("sum", "x", X), agg("sum0", "x", X), agg("avg", "x", X),
    agg("min", "x", X), agg("max", "x", X), agg("first_value", "x", X), agg("last_value", "x", X),
    agg("var_pop", "x", X), agg("stddev_samp", "x", X),
    agg("sum", "d", D), agg("avg", "d", D), agg("var_samp", "d", D), agg("stddev_pop", "d", D),
    agg("listagg", "s", S), agg("collect", "s", S), agg("min", "s", S), agg("last_value", "s", S),
    agg("count", "x", X, True), agg("sum", "x", X, True), agg("avg", "x", X, True), agg("max", "x", X, True),
    agg("first_value", "x", X, True), agg("last_value", "x", X, True), agg("var_pop", "d", D, True),
    agg("listagg", "s", S, True), agg("collect", "s", S, True), agg("min", "s", S, True),
    agg("sum0", "x", X, True), agg("min", "x", X, True), agg("stddev_samp", "x", X, True),
    agg("var_samp", "d", D, True), agg("stddev_pop", "d", D, True),
]
# MIN/MAX/FIRST_VALUE/LAST_VALUE have a cheaper implementation over insert-only input.
VALUE_CALLS = [agg(f, c, t) for f in ("min", "max", "first_value", "last_value") for c, t in (("x", X), ("s", S))]
# A smaller set for properties that run one batch per row.
FEW_CALLS = [agg("count_star"), agg("sum", "x", X), agg("max", "x", X), agg("first_value", "s", S),
             agg("listagg", "s", S), agg("count", "x", X, True), agg("avg", "d", D)]

KEYS = ["a", "b", None]
STRAY_KEYS = ["c", "d"]  # keys that only get retractions until inserted for the first time
xs = st.one_of(st.none(), st.integers(-3, 3))
ss = st.one_of(st.none(), st.sampled_from(["p", "q", "r"]))
ds = st.one_of(st.none(), st.integers(-3, 3).map(float))  # integral values keep float sums exact


@st.composite
def changelogs(draw, max_records=24):
    survivors: list[tuple] = []
    inserted_keys: set = set()
    records = []
    for _ in range(draw(st.integers(1, max_records))):
        op = draw(st.sampled_from(["insert", "insert", "insert", "delete", "update", "stray"]))
        if op in ("delete", "update") and survivors:
            row = survivors.pop(draw(st.integers(0, len(survivors) - 1)))
            if op == "delete":
                records.append(delete_record(*row))
            else:
                new = (row[0], draw(xs), draw(ss), draw(ds))
                survivors.append(new)
                records += [update_before_record(*row), update_after_record(*new)]
        elif op == "stray":
            unseen = [k for k in STRAY_KEYS if k not in inserted_keys]
            if unseen:
                kind = draw(st.sampled_from([delete_record, update_before_record]))
                records.append(kind(draw(st.sampled_from(unseen)), draw(xs), draw(ss), draw(ds)))
        else:
            row = (draw(st.sampled_from(KEYS + STRAY_KEYS)), draw(xs), draw(ss), draw(ds))
            inserted_keys.add(row[0])
            survivors.append(row)
            records.append(insert_record(*row))
    return records


@st.composite
def split(draw, records):
    cuts = sorted(draw(st.sets(st.integers(1, max(1, len(records) - 1)), max_size=5)))
    bounds = [0] + [c for c in cuts if c < len(records)] + [len(records)]
    return [records[a:b] for a, b in zip(bounds[:-1], bounds[1:], strict=True)]


def run(calls, batches, mini_batch, insert_only=False):
    kernel = GroupAggregate(["k"], calls, mini_batch=mini_batch, input_insert_only=insert_only)
    h = KernelHarness(kernel, COLUMNS, dtypes=DTYPES)
    for batch in batches:
        h.process(batch)
    return h.changes


# --- the reference ----------------------------------------------------------------------------

def java_avg(total, n):
    q = abs(total) // n
    return q if total >= 0 else -q


class Welford:
    """Flink's WelfordM2AggFunction, transcribed."""

    def __init__(self):
        self.n, self.mean, self.m2 = 0, 0.0, 0.0

    def add(self, x, step):
        x = float(x)
        self.n += step
        if step > 0 and self.n > 0:
            delta = x - self.mean
            self.mean += delta / self.n
            self.m2 += delta * (x - self.mean)
        elif step < 0 and self.n == 0:
            self.mean = self.m2 = 0.0
        elif step < 0 and self.n > 0:
            delta2 = x - self.mean
            self.mean -= delta2 / self.n
            self.m2 -= (x - self.mean) * delta2

    def result(self, call):
        valid = np.array([self.n > 0 and not self.m2 < 0])
        data, ok = variance_value(call.function, np.array([self.m2]), valid, np.array([self.n]), call.arg_type)
        return data[0].item() if ok[0] else None


VARIANCE = ("var_pop", "var_samp", "stddev_pop", "stddev_samp")
SEQUENTIAL = ("first_value", "last_value", "listagg") + VARIANCE


def batch_value(call, rows, ordered):
    """One aggregate over a key's surviving rows (ordered: the list model of order-sensitive calls)."""
    col = COLUMNS.index(call.arg) if call.arg else None
    values = [r[col] for r in rows if r[col] is not None] if col is not None else []
    if call.distinct:
        values = list(dict.fromkeys(values))
    f = call.function
    if f == "count_star":
        return len(rows)
    if f == "count":
        return len(values)
    if f in ("sum", "sum0"):
        return sum(values, 0.0 if call.arg_type == D else 0) if values or f == "sum0" else None
    if f == "avg":
        if not values:
            return None
        return sum(values) / len(values) if call.arg_type == D else java_avg(sum(values), len(values))
    if f in ("min", "max"):
        return (min if f == "min" else max)(values) if values else None
    if f == "collect":
        return dict(Counter(values))
    if f in VARIANCE:
        return ordered[call.output].result(call) if call.output in ordered else None
    seq = ordered.get(call.output, [])
    if f == "first_value":
        return seq[0] if seq else None
    if f == "last_value":
        return seq[-1] if seq else None
    if f == "listagg":
        return call.separator.join(seq) if seq else None
    raise AssertionError(f)


def reference(calls, records):
    rows: dict = {}
    ordered: dict = {}  # key -> output -> surviving values in arrival order, or a Welford state
    distinct_counts: dict = {}  # key -> output -> value -> count
    order_sensitive = [c for c in calls if c.function in SEQUENTIAL]
    for r in records:
        key, values = r[0], tuple(r)
        if r.get_row_kind().is_retraction():
            if not rows.get(key):
                continue  # a stray retraction: the key has no accumulator
            rows[key].remove(values)
        else:
            rows.setdefault(key, []).append(values)
        for call in order_sensitive:
            v = values[COLUMNS.index(call.arg)]
            if v is None:
                continue
            model = Welford() if call.function in VARIANCE else []
            seq = ordered.setdefault(key, {}).setdefault(call.output, model)
            step = -1 if r.get_row_kind().is_retraction() else 1
            if call.distinct:
                counts = distinct_counts.setdefault(key, {}).setdefault(call.output, Counter())
                counts[v] += step
                if not ((step > 0 and counts[v] == 1) or (step < 0 and counts[v] == 0)):
                    continue
            if isinstance(seq, Welford):
                seq.add(v, step)
            elif step > 0:
                seq.append(v)
            else:
                seq.remove(v)
    out = []
    for key, survivors in rows.items():
        if survivors:
            out.append(insert_record(key, *(batch_value(c, survivors, ordered.get(key, {})) for c in calls)))
    return out


def by_key(rows):
    return sorted(rows, key=lambda r: (r[0] is None, r[0] or ""))


# --- properties -------------------------------------------------------------------------------

SETTINGS = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
MAIN_SETTINGS = settings(SETTINGS, max_examples=100)


@MAIN_SETTINGS
@given(data=st.data(), mini_batch=st.booleans())
def test_materialized_changelog_equals_batch_result(data, mini_batch):
    records = data.draw(changelogs())
    batches = data.draw(split(records))
    assert_changelog(by_key(materialize(run(CALLS, batches, mini_batch))), by_key(reference(CALLS, records)))


@SETTINGS
@given(data=st.data())
def test_without_mini_batch_batch_boundaries_do_not_matter(data):
    records = data.draw(changelogs(max_records=16))
    batches = data.draw(split(records))
    assert_changelog(run(FEW_CALLS, batches, False), run(FEW_CALLS, [[r] for r in records], False))


@SETTINGS
@given(data=st.data())
def test_one_row_bundles_equal_per_row_processing(data):
    records = data.draw(changelogs(max_records=16))
    assert_changelog(run(FEW_CALLS, [[r] for r in records], True), run(FEW_CALLS, [records], False))


@SETTINGS
@given(data=st.data())
def test_mini_batch_emits_at_most_one_change_per_key_and_bundle(data):
    records = data.draw(changelogs())
    kernel = GroupAggregate(["k"], FEW_CALLS, mini_batch=True, input_insert_only=False)
    h = KernelHarness(kernel, COLUMNS, dtypes=DTYPES)
    for batch in data.draw(split(records)):
        out = h.process(batch)
        keys = [r[0] for r in out if str(r.get_row_kind()) != "+U"]
        assert len(keys) == len(set(keys))
    materialize(h.changes)  # every retraction matches an earlier emitted row


@SETTINGS
@given(data=st.data(), mini_batch=st.booleans())
def test_insert_only_implementations_match_the_retractable_ones(data, mini_batch):
    records = [r for r in data.draw(changelogs()) if not r.get_row_kind().is_retraction()]
    batches = data.draw(split(records))
    calls = VALUE_CALLS + [agg("count_star")]
    assert_changelog(run(calls, batches, mini_batch, insert_only=True), run(calls, batches, mini_batch))
