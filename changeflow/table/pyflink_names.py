"""PyFlink 2.3 public names changeflow's Table API does not implement: using one raises, naming it.

A PyFlink program ports by changing imports, so a name PyFlink has must never fail as
an unknown attribute (or, on a ``Table``, as an unknown column): it fails with
:class:`NotImplementedError` naming the PyFlink name and, where there is one, what to
use instead. The lists are PyFlink 2.3's public names (``dir()`` of its classes) minus
the ones changeflow implements; ``tests/table/test_pyflink_names.py`` checks that each
listed name is absent from the class and still refused.
"""

from __future__ import annotations

from changeflow.common.refusals import Refusals

_CATALOGS = ("Catalog objects are Java catalogs; create an in-memory catalog with "
             "CREATE CATALOG c WITH ('type' = 'generic_in_memory')")
_PLANS = "compiled plans are Flink's JSON plans of Java operators; changeflow plans run on Spark"
_MODELS = "models (CREATE MODEL, ML_PREDICT) are not implemented"
_MODULES = "changeflow has only the core module"
_PYTHON_FILES = "ship Python files with Spark (spark-submit --py-files, SparkContext.addPyFile)"

UNSUPPORTED: dict[str, dict[str, str]] = {
    "TableEnvironment": {
        "add_python_archive": _PYTHON_FILES, "add_python_file": _PYTHON_FILES,
        "set_python_requirements": _PYTHON_FILES,
        "compile_plan_sql": _PLANS, "execute_plan": _PLANS, "load_plan": _PLANS,
        "create_catalog": _CATALOGS, "register_catalog": _CATALOGS, "get_catalog": _CATALOGS,
        "create_model": _MODELS, "create_temporary_model": _MODELS, "drop_model": _MODELS,
        "drop_temporary_model": _MODELS, "list_models": _MODELS, "list_temporary_models": _MODELS,
        "load_module": _MODULES, "unload_module": _MODULES, "use_modules": _MODULES,
        "list_full_modules": _MODULES,
    },
    "Table": {
        "from_changelog": "the FROM_CHANGELOG process table function is not implemented; use "
                          "StreamTableEnvironment.from_changelog_stream",
        "to_changelog": "the TO_CHANGELOG process table function is not implemented; use "
                        "StreamTableEnvironment.to_changelog_stream",
    },
    "TableConfig": {
        "get_max_generated_code_length": "changeflow generates no Java code",
        "set_max_generated_code_length": "changeflow generates no Java code",
    },
}


_REFUSALS = Refusals(UNSUPPORTED)
refuse = _REFUSALS.refuse
refused_attribute = _REFUSALS.attribute
