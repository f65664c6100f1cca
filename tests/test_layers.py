"""The layers hold: import-linter's contracts (``.importlinter``) and SQL's use of the environment."""

from __future__ import annotations

import ast
import pathlib
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]

# The contracts of .importlinter this test enforces. "kernels", "runtime" and "acyclic" join it once
# the kernels stop importing DataStream API classes and the Spark runtime stops importing
# changeflow.datastream (issue 16, item 4); until then `lint-imports` reports them broken.
ENFORCED = ("front-ends", "sql-below-table", "kernels", "runtime", "connectors", "pyspark", "acyclic")


def test_import_contracts_hold():
    pytest.importorskip("importlinter")
    from importlinter.cli import lint_imports

    code = lint_imports(config_filename=str(ROOT / ".importlinter"), limit_to_contracts=ENFORCED,
                        no_cache=True, no_logo=True)
    assert code == 0, "an import contract of .importlinter is broken: run lint-imports for the details"


def test_importing_and_planning_the_front_ends_loads_no_pyspark():
    program = (
        "import sys\n"
        "from changeflow.table import EnvironmentSettings, TableEnvironment\n"
        "from changeflow.datastream import StreamExecutionEnvironment\n"
        "t_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())\n"
        "t_env.execute_sql(\"CREATE TABLE t (k STRING, v INT) "
        "WITH ('connector' = 'datagen', 'number-of-rows' = '3')\")\n"
        "t_env.explain_sql('SELECT k, SUM(v) FROM t GROUP BY k')\n"
        "StreamExecutionEnvironment.get_execution_environment().from_collection([1]).map(str)\n"
        "print(sorted(m for m in sys.modules if m == 'pyspark' or m.startswith('changeflow.runtime.spark')))\n"
    )
    out = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, check=True, cwd=ROOT)
    assert out.stdout.strip() == "[]"


def _private_reads(path: pathlib.Path) -> list[str]:
    """``x._name`` reads in ``path`` where ``x`` is not ``self`` or ``cls``."""
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if not (isinstance(node, ast.Attribute) and node.attr.startswith("_") and not node.attr.startswith("__")):
            continue
        if not (isinstance(node.value, ast.Name) and node.value.id in ("self", "cls")):
            found.append(f"{path.relative_to(ROOT)}:{node.lineno}: {ast.unparse(node)}")
    return found


def test_sql_reads_no_other_objects_underscore_names():
    """SQL statements use the environment through ``StatementSession``, never its private members."""
    found = [hit for path in sorted((ROOT / "changeflow" / "sql").rglob("*.py")) for hit in _private_reads(path)]
    assert found == []


def _package_of(module: str) -> str:
    """The package a module belongs to (a package's ``__init__`` belongs to the package itself)."""
    path = ROOT / module.replace(".", "/")
    return module if path.is_dir() else module.rpartition(".")[0]


def test_no_module_imports_another_packages_underscore_names():
    """An underscore name is private to its package: ``from changeflow.x.y import _z`` only within ``changeflow.x``."""
    found = []
    for path in sorted((ROOT / "changeflow").rglob("*.py")):
        module = ".".join(path.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")
        here = _package_of(module)
        for node in ast.walk(ast.parse(path.read_text())):
            if not (isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("changeflow")):
                continue
            private = [a.name for a in node.names if a.name.startswith("_") and not a.name.startswith("__")]
            if private and _package_of(node.module) != here:
                found.append(f"{path.relative_to(ROOT)}:{node.lineno}: {node.module} {', '.join(private)}")
    assert found == []
