"""Writes docs/functions.md: every Flink 2.3 built-in function, and whether changeflow's SQL accepts it.

The list is Flink's ``BuiltInFunctionDefinitions`` (``docs/flink_functions.tsv``, generated from
Flink's jars by ``scripts/generate_flink_catalog.py``), without the internal ones and the
Table API-only helpers (``as``, ``asc``, ``over``, ``withColumns`` ...). For each function the
script builds a SQL call (a written example, or the function's SQL name with candidate
arguments) over a table of typical columns and asks changeflow's SQL front end to plan
``SELECT <call> FROM t``: a function is *supported* when some call parses, types and plans.
Planning needs no Spark. ``tests/docs/test_functions_doc.py`` checks the file is current.

Usage: ``python scripts/generate_functions_doc.py [--check]``
"""

from __future__ import annotations

import logging
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
LIST = ROOT / "docs" / "flink_functions.tsv"
DOC = ROOT / "docs" / "functions.md"

# Internal definitions (planner rewrites, Hive compatibility) and Table API-only expressions.
_SKIP = {"AGG_DECIMAL_MINUS", "AGG_DECIMAL_PLUS", "HIVE_AGG_DECIMAL_PLUS", "ASSIGNMENT", "DEFAULT",
         "reinterpretCast", "throwException", "distinct", "lowerCase", "upperCase", "FROM_CHANGELOG", "TO_CHANGELOG"}

# SQL names that the camelCase-to-snake rule does not give.
_NAMES = {"charLength": "CHAR_LENGTH", "initCap": "INITCAP", "localTimestamp": "LOCALTIMESTAMP",
          "localTime": "LOCALTIME", "timestampDiff": "TIMESTAMPDIFF", "listAgg": "LISTAGG", "sum0": "SUM0",
          "stddevPop": "STDDEV_POP", "stddevSamp": "STDDEV_SAMP", "varPop": "VAR_POP", "varSamp": "VAR_SAMP",
          "fromBase64": "FROM_BASE64", "toBase64": "TO_BASE64", "randInteger": "RAND_INTEGER",
          "convertTz": "CONVERT_TZ", "regexp": "REGEXP", "e": "E", "TRANSLATE3": "TRANSLATE",
          "JSON_ARRAYAGG_ABSENT_ON_NULL": "JSON_ARRAYAGG", "JSON_ARRAYAGG_NULL_ON_NULL": "JSON_ARRAYAGG",
          "JSON_OBJECTAGG_ABSENT_ON_NULL": "JSON_OBJECTAGG", "JSON_OBJECTAGG_NULL_ON_NULL": "JSON_OBJECTAGG",
          "IS_JSON": "IS JSON", "minusPrefix": "- (negation)", "plus": "+", "minus": "-", "times": "*",
          "divide": "/", "equals": "=", "notEquals": "<>", "greaterThan": ">", "greaterThanOrEqual": ">=",
          "lessThan": "<", "lessThanOrEqual": "<=", "and": "AND", "or": "OR", "not": "NOT",
          "isNull": "IS NULL", "isNotNull": "IS NOT NULL", "isTrue": "IS TRUE", "isFalse": "IS FALSE",
          "isNotTrue": "IS NOT TRUE", "isNotFalse": "IS NOT FALSE", "between": "BETWEEN",
          "notBetween": "NOT BETWEEN", "in": "IN", "like": "LIKE", "similar": "SIMILAR TO",
          "ifThenElse": "CASE", "at": "[] (element at)", "array": "ARRAY[...]", "map": "MAP[...]", "row": "ROW",
          "temporalOverlaps": "OVERLAPS", "currentRowTimestamp": "CURRENT_ROW_TIMESTAMP"}

# Example calls where the name and plain arguments are not enough.
_EXAMPLES = {
    "+": ["i + i"], "-": ["i - i"], "*": ["i * i"], "/": ["i / i"], "- (negation)": ["-i"], "=": ["i = i"],
    "<>": ["i <> i"], ">": ["i > i"], ">=": ["i >= i"], "<": ["i < i"], "<=": ["i <= i"], "AND": ["flag AND flag"],
    "OR": ["flag OR flag"], "NOT": ["NOT flag"], "IS NULL": ["s IS NULL"], "IS NOT NULL": ["s IS NOT NULL"],
    "IS TRUE": ["flag IS TRUE"], "IS FALSE": ["flag IS FALSE"], "IS NOT TRUE": ["flag IS NOT TRUE"],
    "IS NOT FALSE": ["flag IS NOT FALSE"], "BETWEEN": ["i BETWEEN 1 AND 2"], "NOT BETWEEN": ["i NOT BETWEEN 1 AND 2"],
    "IN": ["i IN (1, 2)"], "LIKE": ["s LIKE 'a%'"], "SIMILAR TO": ["s SIMILAR TO 'a'"],
    "CASE": ["CASE WHEN flag THEN 1 ELSE 2 END"], "[] (element at)": ["ARRAY[i][1]"], "ARRAY[...]": ["ARRAY[i, i]"],
    "MAP[...]": ["MAP[s, i]"], "ROW": ["ROW(i, s)"], "OVERLAPS": ["(ts, ts) OVERLAPS (ts, ts)"],
    "CAST": ["CAST(i AS STRING)"], "TRY_CAST": ["TRY_CAST(s AS INT)"], "EXTRACT": ["EXTRACT(YEAR FROM ts)"],
    "POSITION": ["POSITION('a' IN s)"], "TRIM": ["TRIM(s)", "TRIM(BOTH 'a' FROM s)"],
    "OVERLAY": ["OVERLAY(s PLACING 'x' FROM 1)"], "SUBSTRING": ["SUBSTRING(s FROM 1 FOR 2)"],
    "TIMESTAMPDIFF": ["TIMESTAMPDIFF(DAY, ts, ts)"], "COUNT": ["COUNT(i)", "COUNT(*)"],
    "IS JSON": ["s IS JSON"], "JSON": ["JSON_OBJECT('k' VALUE JSON(s))"], "JSON_OBJECT": ["JSON_OBJECT('k' VALUE s)"],
    "JSON_OBJECTAGG": ["JSON_OBJECTAGG(KEY s VALUE i)"], "JSON_ARRAYAGG": ["JSON_ARRAYAGG(s)"],
    "JSON_VALUE": ["JSON_VALUE(s, '$.a')"], "JSON_QUERY": ["JSON_QUERY(s, '$.a')"],
    "JSON_EXISTS": ["JSON_EXISTS(s, '$.a')"], "LAG": ["LAG(i) OVER (ORDER BY ts)"],
    "LEAD": ["LEAD(i) OVER (ORDER BY ts)"], "CURRENT_WATERMARK": ["CURRENT_WATERMARK(ts)"],
    "PROCTIME": ["PROCTIME()"], "CURRENT_TIMESTAMP": ["CURRENT_TIMESTAMP"], "CURRENT_DATE": ["CURRENT_DATE"],
    "CURRENT_TIME": ["CURRENT_TIME"], "LOCALTIMESTAMP": ["LOCALTIMESTAMP"], "LOCALTIME": ["LOCALTIME"],
    "CURRENT_ROW_TIMESTAMP": ["CURRENT_ROW_TIMESTAMP()"], "LISTAGG": ["LISTAGG(s)", "LISTAGG(s, ';')"],
    "REGEXP_EXTRACT": ["REGEXP_EXTRACT(s, 'a(b)', 1)", "REGEXP_EXTRACT(s, 'a+')"],
}

# Candidate argument lists for a plain call NAME(args), tried in order.
_ARGUMENTS = ["", "s", "i", "d", "b", "ts", "dt", "flag", "s, i", "i, i", "d, d", "s, s", "ts, s", "s, i, s",
              "s, i, i", "s, s, s", "i, i, i", "'2024-01-01', 'yyyy-MM-dd'"]

_TABLE = [("s", "STRING"), ("i", "INT"), ("b", "BIGINT"), ("d", "DOUBLE"), ("flag", "BOOLEAN"),
          ("ts", "TIMESTAMP(3)"), ("dt", "DATE")]


def sql_name(name: str) -> str:
    """The SQL spelling of a BuiltInFunctionDefinition name (``charLength`` -> ``CHAR_LENGTH``)."""
    if name in _NAMES:
        return _NAMES[name]
    if name.isupper() or "_" in name:
        return name.upper()
    return re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", name).upper()


def calls(name: str) -> list[str]:
    """The SQL calls tried for a function's SQL name."""
    if name in _EXAMPLES:
        return _EXAMPLES[name]
    return [f"{name}({args})" for args in _ARGUMENTS]


def _environment():
    sys.path.insert(0, str(ROOT))
    logging.getLogger("sqlglot").setLevel(logging.ERROR)  # its warnings about unsupported calls are noise here
    from changeflow.table import EnvironmentSettings, TableEnvironment

    env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    columns = ", ".join(f"{n} {t}" for n, t in _TABLE)
    # ts is a rowtime attribute, so that CURRENT_WATERMARK(ts) can be planned.
    env.execute_sql(f"CREATE TABLE t ({columns}, WATERMARK FOR ts AS ts) "
                    "WITH ('connector' = 'datagen', 'number-of-rows' = '1')")
    return env


def accepted(env, name: str) -> str | None:
    """The first call of ``name`` changeflow's SQL front end plans, or None."""
    for call in calls(name):
        try:
            env.sql_query(f"SELECT {call} FROM t")
        except Exception:  # noqa: BLE001  (any refusal means: not this call)
            continue
        return call
    return None


def render() -> str:
    """The text of docs/functions.md."""
    env = _environment()
    rows = []
    for line in LIST.read_text().splitlines():
        if not line or line.startswith("#"):
            continue
        name, kind = line.split("\t")
        if name in _SKIP or kind == "OTHER" or kind == "PROCESS_TABLE":
            continue
        rows.append((sql_name(name), name, kind.lower()))
    seen: dict[str, tuple[str, str, str | None]] = {}
    for sql, name, kind in sorted(rows):
        if sql not in seen:
            seen[sql] = (name, kind, accepted(env, sql))
    supported = sum(1 for _, _, call in seen.values() if call)
    lines = [
        "# Flink 2.3 built-in functions in changeflow",
        "",
        "Generated by `scripts/generate_functions_doc.py` from Flink 2.3's `BuiltInFunctionDefinitions`",
        "(listed from Flink's jars in `docs/flink_functions.tsv`); do not edit. A function is *supported*",
        "when changeflow's SQL front end parses, types and plans a call of it (the call shown);",
        "`tests/docs/test_functions_doc.py` fails when this file is out of date.",
        "",
        f"{supported} of {len(seen)} functions supported.",
        "",
        "| SQL | Flink definition | kind | changeflow | call planned |",
        "|---|---|---|---|---|",
    ]
    for sql, (name, kind, call) in sorted(seen.items()):
        shown = f"`{call}`" if call else ""
        lines.append(f"| `{sql}` | `{name}` | {kind} | {'yes' if call else 'no'} | {shown} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str]) -> int:
    text = render()
    if argv == ["--check"]:
        if DOC.read_text() != text:
            print(f"{DOC.relative_to(ROOT)} is out of date: run scripts/generate_functions_doc.py", file=sys.stderr)
            return 1
        return 0
    DOC.write_text(text)
    print(f"wrote {DOC.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
