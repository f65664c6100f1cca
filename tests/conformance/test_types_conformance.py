"""Every type case (conformance/type_cases.py) run on changeflow and compared with PyFlink 2.3's golden.

Compared exactly: the column types, the text of ``execute().print()`` and ``print_schema()``,
and the collected Python values (each tagged with its class by ``type_cases.encode``, so a
``bytearray``, a ``Decimal``, a ``datetime.time`` or a positional ``Row`` must be just that).
Where PyFlink 2.3 cannot collect a case (``collect_error`` in the golden: TIMESTAMP_LTZ,
some ARRAY/MAP/ROW values), the printed text is the reference and the collected values are
checked against it: printing what collect() returns gives the same table.
"""

from __future__ import annotations

import json
import pathlib
import types

import pytest

from changeflow.common import Row
from changeflow.table.type_text import tableau_text
from changeflow.table import DataTypes, EnvironmentSettings, TableEnvironment
from changeflow.table.expressions import col, lit
from conformance.type_cases import TYPE_CASES, encode

pytestmark = pytest.mark.spark

GOLDENS = pathlib.Path(__file__).resolve().parents[2] / "conformance" / "goldens" / "types"
E = types.SimpleNamespace(DataTypes=DataTypes, Row=Row, col=col, lit=lit)


def printed_cells(text: str) -> list[list[str]]:
    """The cells of a printed tableau's rows (between its second and third rules)."""
    lines = text.splitlines()
    rules = [i for i, line in enumerate(lines) if line.startswith("+")]
    return [[c.strip() for c in line.strip("|").split("|")] for line in lines[rules[1] + 1:rules[2]]]


@pytest.fixture(scope="module")
def envs(spark):
    made = {}

    def env(mode: str) -> TableEnvironment:
        if mode not in made:
            settings = (EnvironmentSettings.in_batch_mode() if mode == "batch"
                        else EnvironmentSettings.in_streaming_mode())
            made[mode] = TableEnvironment.create(settings, spark_session=spark)
            made[mode].get_config().set("changeflow.state.buckets", "2")
        return made[mode]
    return env


@pytest.mark.parametrize("name", sorted(TYPE_CASES))
def test_type_case_matches_flink(name, envs, capsys):
    golden = json.loads((GOLDENS / f"{name}.json").read_text())
    case = TYPE_CASES[name]
    t_env = envs(case.mode)
    table = case.build(t_env, E)

    schema = table.get_schema()
    assert schema.get_field_names() == golden["columns"]
    assert [str(t) for t in schema.get_field_data_types()] == golden["types"]
    capsys.readouterr()
    table.print_schema()
    assert capsys.readouterr().out == golden["print_schema"]

    result = table.execute()
    collected = list(result.collect())
    if golden["rows"] is not None:
        assert [[str(r.get_row_kind()), [encode(v) for v in r]] for r in collected] == golden["rows"]
    else:  # the Python values collect() gives print as Flink printed them
        data_types = schema.get_field_data_types()
        shown = [([str(r.get_row_kind())] if case.mode == "streaming" else [])
                 + [tableau_text(v, t) for v, t in zip(r, data_types, strict=True)] for r in collected]
        assert shown == printed_cells(golden["print"])
    capsys.readouterr()
    result.print()
    assert capsys.readouterr().out == golden["print"]
