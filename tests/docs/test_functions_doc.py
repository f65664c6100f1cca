"""docs/functions.md is what scripts/generate_functions_doc.py writes from the code today. No Spark."""

import importlib.util
import pathlib

ROOT = pathlib.Path(__file__).resolve().parents[2]


def _generator():
    path = ROOT / "scripts" / "generate_functions_doc.py"
    spec = importlib.util.spec_from_file_location("generate_functions_doc", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_functions_doc_is_current():
    generator = _generator()
    assert (ROOT / "docs" / "functions.md").read_text() == generator.render(), \
        "docs/functions.md is out of date: run python scripts/generate_functions_doc.py"


def test_sql_names_and_calls():
    generator = _generator()
    assert generator.sql_name("charLength") == "CHAR_LENGTH"
    assert generator.sql_name("regexpReplace") == "REGEXP_REPLACE"
    assert generator.sql_name("JSON_VALUE") == "JSON_VALUE"
    env = generator._environment()
    assert generator.accepted(env, "JSON_VALUE") == "JSON_VALUE(s, '$.a')"
    assert generator.accepted(env, "JSON_OBJECTAGG") == "JSON_OBJECTAGG(KEY s VALUE i)"
    assert generator.accepted(env, "ARRAY_AGG") is None  # refused: not implemented
    assert generator.accepted(env, "NO_SUCH_FUNCTION") is None
