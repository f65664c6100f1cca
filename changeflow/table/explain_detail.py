"""``ExplainDetail``: the extra details ``Table.explain`` / ``explain_sql`` may be asked for (PyFlink's names).

changeflow's EXPLAIN always shows every operator's changelog mode (Flink's
``CHANGELOG_MODE``) and the settings the planner chose; the other details are
Flink optimizer outputs it has no counterpart for, and asking for them changes
nothing (the plan is printed as always).
"""


class ExplainDetail:
    """The kinds of extra detail of an EXPLAIN, with PyFlink's values."""

    ESTIMATED_COST = 0       # Flink's cost estimates: changeflow has no cost model
    CHANGELOG_MODE = 1       # always shown by changeflow
    JSON_EXECUTION_PLAN = 2  # Flink's JSON job graph: no counterpart
    PLAN_ADVICE = 3          # Flink's tuning advice: no counterpart
