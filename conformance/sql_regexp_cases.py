"""REGEXP_EXTRACT: Flink's results for a match, no match, a group outside the match, index 0 and the
two-argument form, an index past the groups, and NULLs (Nexmark q21 uses the function).

Registered into :data:`conformance.sql_cases.CASES`, recorded by
``conformance/record_flink_sql.py``.
"""

from __future__ import annotations

from conformance.sql_cases import _view, case

# u(url STRING): nexmark-like URLs, an empty string and a NULL
U_ROWS = [("https://www.nexmark.com/x?channel_id=abc&k=1",), ("channel_id=9&z=0",),
          ("https://www.nexmark.com/x?ref=none",), ("",), (None,), ("abc",)]


@case("regexp_extract")
def regexp_extract(t_env, E):
    """REGEXP_EXTRACT with a group index, index 0, the two-argument form, groups that took no part in
    the first match (a later match has them), an index past the pattern's groups, and NULL input."""
    D = E.DataTypes
    _view(t_env, E, "u", U_ROWS, ("url", D.STRING()))
    return t_env.sql_query(
        "SELECT REGEXP_EXTRACT(url, '(&|\\?|^)channel_id=([^&]*)', 2) AS channel_id, "
        "REGEXP_EXTRACT(url, 'channel_id=[^&]*', 0) AS whole, "
        "REGEXP_EXTRACT(url, '[a-z]+') AS first_word, "
        "REGEXP_EXTRACT(url, '(nexmark)|(ref)', 1) AS absent_group, "
        "REGEXP_EXTRACT(url, 'x(y)?', 3) AS past_groups, "
        "REGEXP_EXTRACT(url, '(x)?ref', 1) AS optional_group, "
        "REGEXP_EXTRACT(url, '(w)|(com)', 2) AS other_branch, "
        "REGEXP_EXTRACT(url, '(?<name>[0-9])', 1) AS named, "
        "REGEXP_EXTRACT(url, '^$', 0) AS empty_match FROM u")
