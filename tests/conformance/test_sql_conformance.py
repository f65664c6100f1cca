"""Every Flink SQL conformance case, run on changeflow and compared with Flink 2.3's golden.

Each golden says how it is compared (``compare``, with the reason in ``why``):

- ``changelog``: the exact changelog, in order (one source at parallelism 1: Flink's
  order is input order);
- ``multiset``: the changes as a multiset (mini-batch: Flink emits a bundle's keys in
  hash-map order; each key's own changes are exact);
- ``materialized``: the table the changelog leaves behind (batch mode, whose row order
  is the hash operators'; and queries over two sources, which Flink's two-input
  operators interleave nondeterministically).  Every retraction must still remove a row
  that is there;
- ``error``: Flink rejects the program; changeflow must raise too, no later than Flink
  (a query Flink rejects while planning must fail in ``sql_query``/``execute_sql``),
  with an error naming the offending construct (``error_mentions`` of the case), and
  not with an exception that signals a bug (AttributeError, TypeError, ...).

Result column names and types are compared exactly, as Flink prints the types.  Floats
match to 10 significant digits, as in the Table API conformance.  The first tests check
the goldens against the cases without Spark.
"""

from __future__ import annotations

import datetime
import decimal
import json
import pathlib
import types
from collections import Counter

import pytest

from conformance.sql_cases import CASES

GOLDENS = pathlib.Path(__file__).resolve().parents[2] / "conformance" / "goldens" / "sql"

# Exceptions that mean changeflow crashed rather than rejected the query.
BUG_EXCEPTIONS = (AttributeError, TypeError, KeyError, IndexError, NameError,
                  AssertionError, UnboundLocalError, RecursionError)
STAGES = ("plan", "execute", "collect")


def load_golden(name: str) -> dict:
    return json.loads((GOLDENS / f"{name}.json").read_text(encoding="utf-8"))


def normalize(value):
    """A collected changeflow value (or a golden's JSON value) in a comparable form,
    encoded as ``record_flink.to_json_value`` encodes Flink's."""
    if isinstance(value, bool) or value is None or isinstance(value, (int, str)):
        return value
    if isinstance(value, float):
        return float(f"{value:.10g}")
    if isinstance(value, decimal.Decimal):
        return str(value)
    if isinstance(value, (datetime.date, datetime.time)):  # datetime is a date
        return value.isoformat()
    if isinstance(value, dict):  # MULTISET: [value, count] pairs, sorted, null last
        pairs = sorted(value.items(), key=lambda kv: (kv[0] is None, kv[0] if kv[0] is not None else 0))
        return tuple((normalize(k), c) for k, c in pairs)
    if isinstance(value, (list, tuple)):
        return tuple(normalize(v) for v in value)
    if isinstance(value, (bytes, bytearray)):  # BYTES / BINARY(n): their repr, as the golden's
        return repr(bytes(value))
    raise TypeError(f"unexpected collected value {value!r} ({type(value).__name__})")


def materialize(changes) -> Counter:
    table: Counter = Counter()
    for kind, values in changes:
        if kind in ("-U", "-D"):
            assert table[values] > 0, f"{kind} of a row not in the table: {values}"
            table[values] -= 1
        else:
            table[values] += 1
    return +table


# --------------------------------------------------------------------------------------
# The goldens themselves (no Spark)
# --------------------------------------------------------------------------------------

def test_every_case_has_a_golden_and_every_golden_a_case():
    goldens = {p.stem for p in GOLDENS.glob("*.json")}
    assert goldens == set(CASES)
    assert len(CASES) >= 35


@pytest.mark.parametrize("name", sorted(CASES))
def test_golden_matches_its_case(name):
    golden, case = load_golden(name), CASES[name]
    assert golden["case"] == name and golden["flink_version"] == "2.3.0"
    assert (golden["mode"], golden["config"]) == (case.mode, case.config)
    assert (golden["compare"], golden["why"]) == (case.compare, case.why)
    assert golden["deterministic"] == case.deterministic
    assert golden["statements"], "the program ran no SQL"
    if case.compare == "error":
        assert golden["error"]["stage"] in STAGES and golden["error"]["class"]
        return
    assert len(golden["columns"]) == len(golden["types"])
    assert all(len(values) == len(golden["columns"]) for _, values in golden["changes"])
    changes = [(kind, normalize(values)) for kind, values in golden["changes"]]
    materialize(changes)  # Flink's own changelog is consistent
    if case.mode == "batch":
        assert {kind for kind, _ in changes} <= {"+I"}


# --------------------------------------------------------------------------------------
# changeflow against the goldens
# --------------------------------------------------------------------------------------

def _env(case):
    from changeflow.table import EnvironmentSettings, TableEnvironment

    settings = EnvironmentSettings.in_streaming_mode() if case.mode == "streaming" \
        else EnvironmentSettings.in_batch_mode()
    return settings, TableEnvironment


def _run(case, spark, tmp_path, stage: list):
    """Build and run the case on changeflow; ``stage[0]`` tracks how far it got."""
    from changeflow.common import DataTypes

    settings, TableEnvironment = _env(case)
    t_env = TableEnvironment.create(settings, spark_session=spark)
    t_env.get_config().set("changeflow.state.buckets", "2")
    for key, value in case.config.items():
        t_env.get_config().set(key, value)
    E = types.SimpleNamespace(DataTypes=DataTypes, tmp=str(tmp_path))
    stage[0] = "plan"
    result = case.build(t_env, E)
    if hasattr(result, "get_schema"):  # a Table
        schema = result.get_schema()
        stage[0] = "execute"
        result = result.execute()
    else:  # a TableResult of execute_sql
        schema = result.get_table_schema()
    stage[0] = "collect"
    with result.collect() as rows:
        changes = [(str(r.get_row_kind()), normalize(list(r))) for r in rows]
    return schema, changes


# Cases whose plan matches Flink's but whose rows do not yet: a known bug, kept visible.
KNOWN_WRONG: dict[str, str] = {}


@pytest.mark.spark
@pytest.mark.parametrize("name", [pytest.param(n, marks=pytest.mark.xfail(reason=KNOWN_WRONG[n], strict=False))
                                  if n in KNOWN_WRONG else n
                                  for n in sorted(n for n, c in CASES.items() if c.compare != "error")])
def test_case_matches_flink(name, spark, tmp_path):
    golden, case = load_golden(name), CASES[name]
    schema, ours = _run(case, spark, tmp_path, [None])

    assert schema.get_field_names() == golden["columns"]
    assert [str(t) for t in schema.get_field_data_types()] == golden["types"]

    theirs = [(kind, normalize(values)) for kind, values in golden["changes"]]
    if golden["compare"] == "changelog":
        assert ours == theirs
    elif golden["compare"] == "multiset":
        assert Counter(ours) == Counter(theirs)
    else:
        assert golden["compare"] == "materialized"
        if case.mode == "batch":
            assert {kind for kind, _ in ours} <= {"+I"}, "batch results are insert-only"
        assert materialize(ours) == materialize(theirs)


@pytest.mark.spark
@pytest.mark.parametrize("name", sorted(n for n, c in CASES.items() if c.compare == "error"))
def test_rejected_like_flink(name, spark, tmp_path):
    golden, case = load_golden(name), CASES[name]
    stage = [None]
    with pytest.raises(Exception) as info:
        _run(case, spark, tmp_path, stage)
    error = info.value
    assert not isinstance(error, BUG_EXCEPTIONS), \
        f"changeflow crashed instead of rejecting the query: {error!r}"
    flink_stage = golden["error"]["stage"]
    assert STAGES.index(stage[0]) <= STAGES.index(flink_stage), (
        f"Flink rejects this at {flink_stage} ({golden['error']['message']}); "
        f"changeflow only at {stage[0]}: {error}")
    message = str(error).lower()
    missing = [m for m in case.error_mentions if m.lower() not in message]
    assert not missing, f"the error does not name {missing}: {error}"


@pytest.mark.spark
def test_current_watermark_is_the_same_whatever_the_micro_batches(spark, tmp_path):
    """CURRENT_WATERMARK's watermarks live in its stage's state: three source rows per micro-batch
    give Flink's values (golden current_watermark_filters_late_rows) for every row, the first
    row of each micro-batch too."""
    import dataclasses

    name = "current_watermark_filters_late_rows"
    case = CASES[name]
    case = dataclasses.replace(case, config={**case.config, "changeflow.source.rows-per-batch": "3"})
    _, ours = _run(case, spark, tmp_path, [None])
    assert ours == [(kind, normalize(values)) for kind, values in load_golden(name)["changes"]]
