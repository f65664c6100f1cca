"""Cases of PyFlink's CSV row formats (``CsvRowDeserializationSchema`` / ``CsvRowSerializationSchema``).

Each case is a row type (field names and ``Types`` names, as in ``json_row_cases.py``), the options of
the two builders and CSV texts; ``record_flink_csv_rows.py`` runs Flink 2.3's own schemas over them
(through PyFlink's gateway: no job) and records, per text, the row Flink deserializes, its error or
nothing (a skipped record), and the CSV Flink serializes that row back to. No pyflink import here.
"""

from __future__ import annotations

FIELDS = [("i", "INT", None), ("s", "STRING", None), ("d", "DOUBLE", None), ("ok", "BOOLEAN", None),
          ("arr", "BASIC_ARRAY", "INT"), ("day", "SQL_DATE", None), ("ts", "SQL_TIMESTAMP", None),
          ("l", "LONG", None), ("dec", "BIG_DEC", None)]

TEXTS = [
    '1,a,1.5,true,1;2;3,2024-01-05,2024-01-05 10:00:00,5,1.25',
    '1,"a,b",1.5,TRUE,,2024-01-05,2024-01-05 10:00:00.123,5,1',
    '1,"a ""q"" b",,false,1,,,,',
    ',,,,,,,,',
    '1,a',
    '1,a,1.5,true,1;2;3,2024-01-05,2024-01-05 10:00:00,5,1.25,extra',
    'x,a,1.5,true,1;2;3,2024-01-05,2024-01-05 10:00:00,5,1.25',
    ' 1 , a ,1e3,yes,1; 2,2024-1-5,2024-01-05 10:00:00,5,1e2',
    '1,a,1.5,true,1,2024-01-05,2024-01-05T10:00:00,5,1',
    '#comment',
    '',
    '1,a\\,b,1.5,true,1,2024-01-05,2024-01-05 10:00:00,5,1',
    "1,'a,b',1.5,true,1,2024-01-05,2024-01-05 10:00:00,5,1",
    '1,null,1.5,true,1,2024-01-05,2024-01-05 10:00:00,5,1',
    '1,a,1.5,true,1;x,2024-01-05,2024-01-05 10:00:00,5,1',
    '1,"multi\nline",1.5,true,1,2024-01-05,2024-01-05 10:00:00,5,1',
    '2147483648,a,1.5,true,1,2024-01-05,2024-01-05 10:00:00,5,1',
    '1,a,NaN,true,1,2024-01-05,2024-01-05 10:00:00,5,1',
    '1,a,1.5,true,1,2024-01-05,2024-01-05 10:00:00,5,1\n2,b',
    '-7,é #x,-0.0,false,-1;0,1999-12-31,1999-12-31 23:59:59.999999,-9223372036854775808,-0.50',
]

_PIPES = [t.replace(",", "|").replace(";", ":") for t in TEXTS] + [
    "1|'a|b'|1|true|1|2024-01-05|2024-01-05 10:00:00|5|1",
    "1|a\\|b|1|true|1|2024-01-05|2024-01-05 10:00:00|5|1",
    "1|'it''s'|1|true|1|2024-01-05|2024-01-05 10:00:00|5|1",
    "#comment|2",
]

CASES = {
    "csv_rows": {"fields": FIELDS, "read": [], "write": [], "texts": TEXTS},
    "csv_rows_options": {
        "fields": FIELDS,
        "read": [["set_field_delimiter", "|"], ["set_quote_character", "'"], ["set_escape_character", "\\"],
                 ["set_null_literal", "null"], ["set_array_element_delimiter", ":"], ["set_allow_comments", True],
                 ["set_ignore_parse_errors", True]],
        "write": [["set_field_delimiter", "|"], ["set_quote_character", "'"], ["set_escape_character", "\\"],
                  ["set_null_literal", "null"], ["set_array_element_delimiter", ":"], ["set_line_delimiter", "\r\n"]],
        "texts": _PIPES},
    "csv_rows_ignore_parse_errors_unquoted": {
        "fields": FIELDS, "read": [["set_ignore_parse_errors", True]], "write": [["disable_quote_character"]],
        "texts": TEXTS},
}
