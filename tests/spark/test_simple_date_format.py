"""The SimpleDateFormat pattern compiler behind UNIX_TIMESTAMP(text, format) and TO_DATE(text, format).

Its results are checked against Flink 2.3 by the goldens ``unix_timestamp_simple_date_format*`` and
``to_date_simple_date_format`` (tests/conformance/test_sql_conformance.py); these tests pin what the
compiler refuses and how it reads a pattern, without Spark.
"""

from __future__ import annotations

import re

import pytest

from changeflow.runtime.spark.simple_date_format import compile_pattern


def _python(regex: str) -> str:
    # Python's re has atomic groups and possessive quantifiers from 3.11; the patterns here need neither
    # to match the same texts.
    return regex.replace("++", "+").replace("}+", "}").replace("*+", "*").replace("(?>", "(?:")


def _groups(pattern: str, text: str):
    regex, fields = compile_pattern(pattern, "test")
    match = re.match(_python(regex), text)
    if match is None:
        return None
    return {letter: "".join(match.group(g) or "" for g in field.groups) for letter, field in fields.items()}


def test_a_prefix_is_read_and_the_rest_ignored():
    assert _groups("yyyy-MM-dd", "2024-01-01 00:00:00") == {"y": "2024", "M": "01", "d": "01"}
    assert _groups("yyyy-MM-dd HH:mm:ss", "2024-01-01 12:34") is None


def test_quotes_spaces_and_abutting_fields():
    assert _groups("yyyy-MM-dd 'at' HH", "2024-01-05 at 10") == {"y": "2024", "M": "01", "d": "05", "H": "10"}
    assert _groups("yyyy-MM-dd ''HH''", "2024-01-05 '10'")["H"] == "10"
    assert _groups("yyyy-MM-dd", " 2024- 01-05") == {"y": "2024", "M": "01", "d": "05"}
    # Abutting fields read their width, the skipped spaces included (Flink: ' 2024-01-05' is 202-04-00).
    assert _groups("yyyyMMddHH", "2024010512") == {"y": "2024", "M": "01", "d": "05", "H": "12"}
    assert _groups("yyyyMMddHH", " 2024-01-05") == {"y": "202", "M": "4", "d": "-0", "H": "1"}
    assert _groups("dd MMM yyyy", "05 jAN 2024")["M"] == "jAN"
    assert _groups("dd MMM yyyy", "05 Janu 2024") is None


@pytest.mark.parametrize("pattern, refused", [
    ("yyyy-MM-dd HH:mm:ss Z", "'Z'"), ("yyyy-MM-dd EEE", "'E'"), ("yyyy-ww", "'w'"),
    ("yyyy-MM-dd HH hh", "sets a field twice"), ("yyyy-DDD-dd", "sets a field twice"),
    ("HH a", "sets a field twice"), ("yyyy-MM-dd yyyy", "appears twice"),
])
def test_fields_not_read_are_refused_by_name(pattern, refused):
    with pytest.raises(NotImplementedError, match=re.escape(refused)):
        compile_pattern(pattern, "UNIX_TIMESTAMP's format")


def test_an_unterminated_quote_is_an_error():
    with pytest.raises(ValueError, match="unterminated quote"):
        compile_pattern("yyyy 'at", "TO_DATE's format")


@pytest.mark.parametrize("pattern", ["yyyy-MM-dd hh", "yyyy-MM-dd HH a", "yyyy-DDD-MM", "yyyy-MM-dd Z"])
def test_to_timestamp_refuses_what_it_does_not_read(pattern):
    from changeflow.runtime.spark.java_time_format import _compile

    with pytest.raises(NotImplementedError, match="TO_TIMESTAMP's format"):
        _compile(pattern)
