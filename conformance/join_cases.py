"""Regular-join conformance cases, shared by the Flink recorder and the replay tests.

Each case is two small sources and a query over them, written once as data so that
PyFlink (``record_flink_joins.py``) and changeflow's kernels (``tests/kernels/
test_join_goldens.py``) run the same thing. A source is a list of rows of ``(k, v)``;
``pre`` optionally turns a source into a retracting changelog with a group
aggregation (``SELECT k, SUM(v) AS s, COUNT(*) AS c FROM src GROUP BY k``), so the
join sees ``-U``/``+U`` on that side. The join is ``left <TYPE> JOIN right ON
left.k = right.k [AND condition]``; its output columns are the left columns then the
right columns, clashing names renamed by Flink (``k0``, ...).

Flink's interleaving of two sources is not deterministic, so the replay compares the
materialized changelog (and, for batch mode, the rows).
"""

from __future__ import annotations

from dataclasses import dataclass, field

NULL = None


@dataclass(frozen=True)
class JoinCase:
    name: str
    description: str
    left: list[tuple]
    right: list[tuple]
    join_type: str  # INNER | LEFT | RIGHT | FULL
    left_pre: bool = False   # aggregate the left source first (a retracting input)
    right_pre: bool = False
    condition: str | None = None  # extra ON condition in SQL over l.<col> / r.<col>
    mode: str = "streaming"
    config: dict = field(default_factory=dict)


MINI_BATCH = {"table.exec.mini-batch.enabled": "true", "table.exec.mini-batch.allow-latency": "10 s",
              "table.exec.mini-batch.size": "1000"}

_L = [(1, 10), (2, 20), (1, 11), (3, 30), (2, 21), (4, NULL)]
_R = [(1, 100), (3, 300), (1, 101), (5, 500), (3, 301)]
_L_NULLS = [(1, 10), (NULL, 20), (2, 30), (NULL, 40)]
_R_NULLS = [(NULL, 200), (1, 100), (NULL, 300), (3, 400)]

CASES: list[JoinCase] = []
for _type in ("INNER", "LEFT", "RIGHT", "FULL"):
    t = _type.lower()
    CASES += [
        JoinCase(f"{t}_join_insert_only", f"{_type} JOIN of two insert-only sources, duplicate keys on both sides.",
                 _L, _R, _type),
        JoinCase(f"{t}_join_over_aggregates", f"{_type} JOIN of two group aggregations (retractions on both sides).",
                 _L, _R, _type, left_pre=True, right_pre=True),
        JoinCase(f"{t}_join_null_keys", f"{_type} JOIN where both sides have NULL join keys (never match).",
                 _L_NULLS, _R_NULLS, _type),
        JoinCase(f"{t}_join_non_equi", f"{_type} JOIN with an extra non-equi condition l.v < r.v - 95.",
                 _L, _R, _type, condition="l.v < r.v - 95"),
        JoinCase(f"{t}_join_over_aggregates_minibatch", f"{_type} JOIN of two aggregations, mini-batch on.",
                 _L, _R, _type, left_pre=True, right_pre=True, config=MINI_BATCH),
        JoinCase(f"{t}_join_insert_only_minibatch", f"{_type} JOIN of two insert-only sources, mini-batch on.",
                 _L, _R, _type, config=MINI_BATCH),
        JoinCase(f"batch_{t}_join_over_aggregates", f"{_type} JOIN of two aggregations in batch mode.",
                 _L, _R, _type, left_pre=True, right_pre=True, mode="batch"),
        JoinCase(f"batch_{t}_join_non_equi", f"{_type} JOIN with a non-equi condition in batch mode.",
                 _L_NULLS + _L, _R_NULLS + _R, _type, condition="l.v < r.v - 95", mode="batch"),
    ]

CASES_BY_NAME = {c.name: c for c in CASES}


def side_sql(view: str, pre: bool) -> str:
    """The SQL of one join input over the source view ``view`` (columns k, v)."""
    if pre:
        return f"SELECT k, SUM(v) AS v, COUNT(*) AS c FROM {view} GROUP BY k"
    return f"SELECT k, v FROM {view}"


def query_sql(case: JoinCase) -> str:
    on = "l.k = r.k" + (f" AND {case.condition}" if case.condition else "")
    join = {"INNER": "JOIN", "LEFT": "LEFT JOIN", "RIGHT": "RIGHT JOIN", "FULL": "FULL OUTER JOIN"}[case.join_type]
    return (f"SELECT * FROM ({side_sql('ls', case.left_pre)}) AS l {join} "
            f"({side_sql('rs', case.right_pre)}) AS r ON {on}")
