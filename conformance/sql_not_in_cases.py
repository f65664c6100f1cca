"""``NOT IN (subquery)`` conformance cases: Flink's null-aware anti join (issue 17).

``x NOT IN (SELECT y ..)`` is three-valued: TRUE when the subquery's rows (those of the
outer row's correlation) are empty, or when ``x`` is not NULL and no ``y`` equals it and
no ``y`` is NULL; UNKNOWN (the row is dropped) when no ``y`` equals ``x`` but ``x`` or a
``y`` is NULL; FALSE when a ``y`` equals ``x``. Registered into
:data:`conformance.sql_cases.CASES`, recorded by ``conformance/record_flink_sql.py``.
The subquery is a second scan, so streaming changelogs are compared materialized.
"""

from __future__ import annotations

from conformance.sql_cases import _kv, case
from conformance.sql_setop_cases import WHY_SUBQUERY, _ab

_SUMS = "(SELECT k, SUM(v) AS s FROM kv GROUP BY k)"


@case("not_in_subquery_with_null", compare="materialized", why=WHY_SUBQUERY)
def not_in_subquery_with_null(t_env, E):
    """s NOT IN a subquery that holds a NULL: UNKNOWN for every row, so no row."""
    _ab(t_env, E)
    return t_env.sql_query("SELECT k, s FROM a WHERE s NOT IN (SELECT s FROM b WHERE k > 2)")


@case("not_in_subquery_null_outer", compare="materialized", why=WHY_SUBQUERY)
def not_in_subquery_null_outer(t_env, E):
    """s NOT IN a subquery without NULLs: the rows of a whose s is NULL are dropped too."""
    _ab(t_env, E)
    return t_env.sql_query("SELECT k, s FROM a WHERE s NOT IN (SELECT s FROM b WHERE s IS NOT NULL)")


@case("not_in_correlated", compare="materialized", why=WHY_SUBQUERY)
def not_in_correlated(t_env, E):
    """Correlated NOT IN: the NULL only rules out the rows of its own key."""
    _ab(t_env, E)
    return t_env.sql_query("SELECT k, s FROM a WHERE s NOT IN (SELECT s FROM b WHERE b.k = a.k)")


@case("not_in_over_retracting_input", compare="materialized", why=WHY_SUBQUERY)
def not_in_over_retracting_input(t_env, E):
    """NOT IN over a subquery whose rows come and go (sums per key)."""
    _kv(t_env, E)
    return t_env.sql_query(f"SELECT k, v FROM kv WHERE v NOT IN (SELECT s FROM {_SUMS})")


@case("not_in_empty_and_under_or_batch", mode="batch")
def not_in_empty_and_under_or_batch(t_env, E):
    """Batch: NOT IN an empty subquery keeps every row (NULLs too); NOT (.. IN ..) under OR."""
    _ab(t_env, E)
    return t_env.sql_query("SELECT k, s FROM a WHERE s NOT IN (SELECT s FROM b WHERE k > 100) "
                           "UNION ALL SELECT k, s FROM a WHERE NOT (s IN (SELECT s FROM b WHERE k > 3)) OR k = 3")
