"""Cases of PyFlink's JSON row formats (``JsonRowDeserializationSchema`` / ``JsonRowSerializationSchema``).

Each case is a row type (field names and ``Types`` names), the schema's options and JSON texts;
``record_flink_json_rows.py`` runs Flink 2.3's own schemas over them (its Java classes, through
PyFlink's gateway: no job) and records, per text, the row Flink deserializes, its error, or
nothing (a skipped record), and the JSON Flink serializes that row back to. No pyflink import here:
the tests read the cases too.
"""

from __future__ import annotations

# (field name, Types constructor name, argument) — the argument is an element or nested field list.
ALL_TYPES = [("i", "INT", None), ("l", "LONG", None), ("s", "SHORT", None), ("b", "BYTE", None),
             ("d", "DOUBLE", None), ("f", "FLOAT", None), ("ok", "BOOLEAN", None), ("name", "STRING", None),
             ("day", "SQL_DATE", None), ("ts", "SQL_TIMESTAMP", None), ("tags", "BASIC_ARRAY", "STRING"),
             ("nums", "BASIC_ARRAY", "INT"), ("inner", "ROW_NAMED", [("x", "LONG", None), ("y", "STRING", None)])]

TEXTS = [
    '{"i": 1, "l": 12345678901, "s": 2, "b": 3, "d": 1.5, "f": 2.25, "ok": true, "name": "a", "day": "2026-01-02",'
    ' "ts": "2026-01-02T03:04:05.123Z", "tags": ["x", "y"], "nums": [1, 2], "inner": {"x": 7, "y": "z"}}',
    '{"i": 2}',
    '{}',
    '{"i": null, "name": null, "tags": null, "inner": null}',
    '{"i": "3", "l": "9", "d": 2, "f": "0.5", "ok": "true", "name": 5}',
    '{"i": 1.7, "l": 2.9, "s": -1.2}',
    '{"i": "abc"}',
    '{"i": 2147483648}',
    '{"i": -2147483648, "l": -9223372036854775808, "b": 127, "s": 32767}',
    '{"b": 128}',
    '{"ok": 1}',
    '{"ok": "yes"}',
    '{"ok": "TRUE"}',
    '{"name": {"a": 1, "b": [true, null]}}',
    '{"name": [1, 2]}',
    '{"name": "tab\\there \\u00e9 \\"q\\""}',
    '{"name": true, "d": "NaN"}',
    '{"d": 1e308, "f": 1e-7}',
    '{"ts": "2026-01-02 03:04:05"}',
    '{"ts": "2026-01-02T03:04:05"}',
    '{"ts": "2026-01-02T03:04:05Z"}',
    '{"ts": "2026-01-02T03:04:05.123456789Z"}',
    '{"ts": "2026-01-02T03:04:05+01:00"}',
    '{"day": "2026-1-2"}',
    '{"day": "2026-02-30"}',
    '{"tags": ["x", null, 3]}',
    '{"tags": "x"}',
    '{"nums": [1, "2", 3.5]}',
    '{"inner": {"x": "5"}}',
    '{"inner": {"x": 1, "y": "a", "extra": 2}, "extra": {"deep": 1}}',
    '{"inner": 5}',
    '{"i": 1, "i": 2}',
    'not json',
    '[1, 2]',
    '5',
    '"text"',
    'null',
    '',
    '{"i": 1',
    '{"i": 1} trailing',
]

def row_type(types, fields):
    """The ``Types.ROW_NAMED`` of ``fields``, built with ``types`` (PyFlink's ``Types`` or changeflow's)."""
    def one(kind, arg):
        if kind == "ROW_NAMED":
            return row_type(types, arg)
        if kind == "BASIC_ARRAY":
            return types.BASIC_ARRAY(getattr(types, arg)())
        return getattr(types, kind)()
    return types.ROW_NAMED([f[0] for f in fields], [one(f[1], f[2]) for f in fields])


CASES = {
    "json_rows": {"fields": ALL_TYPES, "options": [], "texts": TEXTS},
    "json_rows_fail_on_missing_field": {"fields": ALL_TYPES[:3], "options": ["fail_on_missing_field"],
                                        "texts": ['{"i": 1, "l": 2, "s": 3}', '{"i": 1, "l": 2}', '{}',
                                                  '{"i": null, "l": null, "s": null}', 'not json']},
    "json_rows_ignore_parse_errors": {"fields": ALL_TYPES, "options": ["ignore_parse_errors"], "texts": TEXTS},
    # Jackson skips only JSON's whitespace before the value (not a no-break space, an em space or a form
    # feed) and refuses the non-numeric numbers NaN and Infinity unquoted.
    "json_rows_whitespace_and_constants": {
        "fields": ALL_TYPES[:5], "options": [],
        "texts": [' \t\n\r{"i": 1}', '\u00a0{"i": 1}', '\u2003{"i": 1}', '\x0c{"i": 1}', '\ufeff{"i": 1}',
                  '{"d": NaN}', '{"d": Infinity}', '{"d": -Infinity}', '{"d": 1.50, "l": 2E3}',
                  '{"i": 1}\u00a0trailing']},
}
