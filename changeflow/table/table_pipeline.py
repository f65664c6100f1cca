"""``Table.insert_into`` (PyFlink's ``TablePipeline``) and ``Table.to_pandas``.

``table.insert_into('sink').execute()`` is ``table.execute_insert('sink')``, as in
PyFlink. ``to_pandas()`` runs the query and returns its rows as a pandas DataFrame;
over an updating query the changelog is applied first, as PyFlink does (the final
rows, not the changes).
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING, Any

import pandas as pd


if TYPE_CHECKING:
    from changeflow.table.result import TableResult
    from changeflow.table.table import Table


class TablePipeline:
    """A table's query bound to a sink, run by :meth:`execute` (PyFlink's ``TablePipeline``)."""

    def __init__(self, table: "Table", table_path: str, overwrite: bool) -> None:
        self._table = table
        self._path = table_path
        self._overwrite = overwrite

    def execute(self) -> "TableResult":
        """Run ``INSERT INTO`` the sink, in the background as PyFlink (``.wait()`` blocks)."""
        return self._table.execute_insert(self._path, self._overwrite)

    def get_sink_identifier(self) -> str:
        """The sink's full name, ``catalog.database.table`` (the current ones complete a short path)."""
        return self._table._t_env._catalog.qualify(self._path).identifier

    def explain(self, *extra_details: Any) -> str:
        raise NotImplementedError("TablePipeline.explain (PyFlink's) is not supported by changeflow: "
                                  "use TableEnvironment.explain_sql('INSERT INTO ...')")

    def print_explain(self, *extra_details: Any) -> None:
        self.explain(*extra_details)

    def compile_plan(self) -> Any:
        raise NotImplementedError("TablePipeline.compile_plan (PyFlink's) is not supported by changeflow: compiled "
                                  "plans are Flink's JSON plans of Java operators")


def to_pandas(table: "Table") -> pd.DataFrame:
    """The query's final rows as a DataFrame (an updating query's changelog applied)."""
    names = table.get_schema().get_field_names()
    live: Counter = Counter()
    order: dict = {}
    with table.execute().collect() as rows:
        for row in rows:
            values = tuple(row)
            if str(row.get_row_kind()) in ("+I", "+U"):
                live[values] += 1
                order.setdefault(values, len(order))
            else:
                live[values] -= 1
    kept = [v for v in sorted(order, key=order.__getitem__) for _ in range(live[v])]
    return pd.DataFrame(kept, columns=pd.Index(names)) if kept else pd.DataFrame({n: [] for n in names})
