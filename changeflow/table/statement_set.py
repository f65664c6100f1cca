"""``StatementSet``: several INSERTs run as one job (PyFlink's ``t_env.create_statement_set()``).

Each statement is planned when added (its errors come with it, as in Flink);
``execute()`` submits every sink as one job: in streaming mode one Structured
Streaming query whose micro-batches feed all the sinks (so one checkpoint
covers them all), in batch mode one job writing each sink in turn.
``EXECUTE STATEMENT SET BEGIN INSERT ...; INSERT ...; END`` in ``execute_sql``
runs through the same path (:func:`split_statement_set`).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from changeflow.plan.nodes import Sink
from changeflow.sql import statements
from changeflow.table.result import TableResult

if TYPE_CHECKING:
    from changeflow.table.environment import TableEnvironment
    from changeflow.table.table import Table


class StatementSet:
    """INSERT statements collected to run as one job."""

    def __init__(self, t_env: "TableEnvironment") -> None:
        self._t_env = t_env
        self._sinks: list[Sink] = []

    def add_insert_sql(self, stmt: str) -> "StatementSet":
        """Add an ``INSERT INTO ...`` statement."""
        tokens = statements.statement_tokens(stmt)
        if not tokens or tokens[0].text.upper() != "INSERT":
            raise statements.StatementError("Unsupported SQL query! add_insert_sql() only accepts a single SQL "
                                            f"statement of type INSERT, got {stmt.strip()[:60]!r}")
        outcome = statements.execute(self._t_env._planning, stmt)  # an INSERT is only planned here
        plan = getattr(outcome, "plan", None)
        if not isinstance(plan, Sink):
            raise statements.StatementError(f"add_insert_sql() takes one INSERT statement, got {stmt.strip()[:60]!r}")
        self._sinks.append(plan)
        return self

    def add_insert(self, target_path_or_descriptor: str, table: "Table", overwrite: bool = False) -> "StatementSet":
        """Add the insert of ``table``'s rows into the catalog table ``target_path_or_descriptor``."""
        if overwrite:
            raise NotImplementedError("INSERT OVERWRITE is not supported; write into an empty table")
        if not isinstance(target_path_or_descriptor, str):
            raise NotImplementedError("add_insert() into a TableDescriptor is not supported; create the table "
                                      "(create_temporary_table) and add_insert() by its path")
        self._sinks.append(self._t_env._planning.insert_plan(target_path_or_descriptor, table.plan))
        return self

    def has_statements(self) -> bool:
        """Whether an INSERT was added since the set was created or last executed (changeflow's own)."""
        return bool(self._sinks)

    def add(self, table_pipeline) -> "StatementSet":
        raise NotImplementedError("StatementSet.add(TablePipeline) is not supported; use add_insert(path, table)")

    def attach_as_datastream(self) -> None:
        raise NotImplementedError("StatementSet.attach_as_datastream() is not supported: changeflow runs a "
                                  "statement set as its own job; call execute()")

    def compile_plan(self):
        raise NotImplementedError("StatementSet.compile_plan() (Flink's CompiledPlan) is not supported")

    def explain(self, *extra_details) -> str:
        """The plan of every statement, one after the other."""
        if not self._sinks:
            raise statements.StatementError("No modify operations to explain: the statement set is empty")
        return "\n".join(self._t_env._planning.explain(plan) for plan in self._sinks)

    def print_explain(self, *extra_details) -> None:
        print(self.explain(*extra_details))

    def execute(self) -> TableResult:
        """Run every statement as one job; the set is empty afterwards (as in Flink)."""
        if not self._sinks:
            raise statements.StatementError("No modify operations to execute: the statement set is empty")
        sinks, self._sinks = self._sinks, []
        return run_sinks(self._t_env, sinks)


def run_sinks(t_env: "TableEnvironment", sinks: list[Sink]) -> TableResult:
    """Submit ``sinks`` as one job (streaming if any of them runs streaming)."""
    planning = t_env._planning
    streaming = any(planning.runs_streaming(plan) for plan in sinks)
    tables = [plan.table for plan in sinks]
    name = (planning.option("pipeline.name") or "insert-into_" + ",".join(tables)) if streaming else None
    return t_env._submitted(TableResult.of_job(t_env._engine().submit_inserts(sinks, streaming, name), tables))


_STATEMENT_SET = re.compile(r"^\s*EXECUTE\s+STATEMENT\s+SET\s+BEGIN\b(.*)\bEND\s*;?\s*$", re.IGNORECASE | re.DOTALL)


def split_statement_set(stmt: str) -> list[str] | None:
    """The INSERT statements of ``EXECUTE STATEMENT SET BEGIN ...; END``, or None for another statement.

    Statements split at semicolons outside string literals.
    """
    match = _STATEMENT_SET.match(stmt)
    if match is None:
        return None
    parts, current, quoted = [], [], False
    for ch in match.group(1):
        if ch == "'":
            quoted = not quoted
        if ch == ";" and not quoted:
            parts.append("".join(current))
            current = []
        else:
            current.append(ch)
    parts.append("".join(current))
    return [p.strip() for p in parts if p.strip()]
