"""Where a Java pattern's capturing groups end (REGEXP_EXTRACT reads it at plan time), and what is refused."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from changeflow.common.types import DataTypes as T
from changeflow.plan.java_regex import group_ends
from changeflow.plan.nodes import Source
from changeflow.sql import SqlError, plan_query
from changeflow.table.expressions import col

ATOMS = ["a", "b", ".", "\\d", "\\(", "\\)", "[()]", "[^)]", "[a-z&&[^b]]", "\\Q()\\E", "(?:a)", "(?=b)",
         "(?<=a)", "(?!c)", "(?i:a)", "(?<g{}>a)", "(a)", "(b|c)", "(?>a)"]


@st.composite
def patterns(draw, depth=0):
    parts = draw(st.lists(st.sampled_from(ATOMS) if depth > 1 else
                          st.one_of(st.sampled_from(ATOMS), st.builds(lambda p: f"({p})", patterns(depth + 1))),
                          max_size=5))
    return "".join(parts)


def numbered(pattern: str) -> str:
    """Each ``(?<g{}>`` named apart: ``g0``, ``g1``, ..."""
    parts = pattern.split("{}")
    return "".join(p + (str(i) if i < len(parts) - 1 else "") for i, p in enumerate(parts))


def python_form(pattern: str) -> str:
    """The same pattern in Python's syntax (named groups, \\Q..\\E, class intersection) for its group count."""
    pattern = re.sub(r"\\Q(.*?)\\E", lambda m: re.escape(m.group(1)), pattern)
    return pattern.replace("(?<g", "(?P<g").replace("[a-z&&[^b]]", "[ac-z]")


@given(patterns().map(numbered))
def test_the_groups_found_are_the_ones_a_regex_engine_counts(pattern):
    ends = group_ends(pattern)
    compiled = re.compile(python_form(pattern))
    assert len(ends) == compiled.groups
    assert all(pattern[e] == ")" for e in ends)


def test_group_ends_by_number():
    assert group_ends(r"(&|^)channel_id=([^&]*)") == [4, 22]
    assert group_ends(r"((a)(b))") == [7, 3, 6]   # a group ends after the groups it holds
    assert group_ends(r"[(](x)") == [5]


@pytest.mark.parametrize("pattern, reason", [("(a", "an unclosed group"), ("a)", "an unmatched ')'"),
                                             ("[ab", "an unclosed character class"), ("(?x) a", "COMMENTS")])
def test_patterns_it_cannot_read_are_refused_by_name(pattern, reason):
    with pytest.raises(ValueError, match=re.escape(reason)):
        group_ends(pattern)


SOURCE = Source("u", (("url", T.STRING()), ("re", T.STRING()), ("i", T.INT())), "elements", [])


def test_regexp_extract_plans_with_a_literal_pattern_and_group_in_sql_and_the_table_api():
    plan = plan_query("SELECT REGEXP_EXTRACT(url, '(a)(b)?', 2) AS g, REGEXP_EXTRACT(url, 'x') AS w FROM u",
                      lambda name: SOURCE)
    assert [str(t) for _, t in plan.schema] == ["STRING", "STRING"]
    assert str(col("url").regexp_extract("a(b)", 1)) == "REGEXP_EXTRACT(url, 'a(b)', 1)"


@pytest.mark.parametrize("sql, message", [
    ("REGEXP_EXTRACT(url, re, 1)", "a pattern or group index that is not a literal is not supported"),
    ("REGEXP_EXTRACT(url, 'a', i)", "a pattern or group index that is not a literal is not supported"),
    ("REGEXP_EXTRACT(url, 'a(', 1)", "is not a regular expression changeflow reads (an unclosed group)"),
    ("REGEXP_EXTRACT(url, 'a', 'b')", "needs an integer group index"),
    ("REGEXP_EXTRACT(url, 'a', 1, 2)", "function REGEXP_EXTRACT"),
])
def test_what_changeflow_cannot_compute_as_flink_does_is_refused(sql, message):
    with pytest.raises(SqlError, match=re.escape(message)):
        plan_query(f"SELECT {sql} FROM u", lambda name: SOURCE)
