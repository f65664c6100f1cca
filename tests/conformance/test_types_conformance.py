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
from changeflow.table import DataTypes, EnvironmentSettings, TableEnvironment
from changeflow.table.expressions import col, lit
from conformance.type_cases import TYPE_CASES, encode

pytestmark = pytest.mark.spark

GOLDENS = pathlib.Path(__file__).resolve().parents[2] / "conformance" / "goldens" / "types"
E = types.SimpleNamespace(DataTypes=DataTypes, Row=Row, col=col, lit=lit)


@pytest.fixture(scope="module")
def envs(spark):
    made = {}

    def env(mode: str) -> TableEnvironment:
        if mode not in made:
            settings = EnvironmentSettings.in_batch_mode() if mode == "batch" else EnvironmentSettings.in_streaming_mode()
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
    rows = [[str(r.get_row_kind()), [encode(v) for v in r]] for r in result.collect()]
    if golden["rows"] is not None:
        assert rows == golden["rows"]
    capsys.readouterr()
    result.print()
    assert capsys.readouterr().out == golden["print"]
