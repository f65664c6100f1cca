"""``Table``: a lazily built query, as PyFlink's ``Table``."""

from __future__ import annotations

import itertools
from typing import TYPE_CHECKING

from changeflow.plan import builder, join_builder
from changeflow.table import columns_ops, ordering
from changeflow.expressions import Column, Expression
from changeflow.plan.nodes import PlanNode
from changeflow.plan.type_inference import PlanError
from changeflow.table.aggregate_tables import AggregatedTable, FlatAggregateTable
from changeflow.table.pyflink_names import UNSUPPORTED, refused_attribute
from changeflow.table.window_tables import GroupWindowedTable, OverWindowedTable, WindowGroupedTable

if TYPE_CHECKING:
    from changeflow.table.environment import TableEnvironment
    from changeflow.table.conflict import InsertConflictStrategy
    from changeflow.table.result import TableResult
    import pandas as pd
    from pyspark.sql import DataFrame

    from changeflow.table.table_pipeline import TablePipeline


__all__ = ["GroupWindowedTable", "GroupedTable", "OverWindowedTable", "Table", "TableSchema", "WindowGroupedTable"]

_UNNAMED = itertools.count()  # Flink numbers the tables it registers for toString() across the process


def _exprs(fields: tuple) -> list[Expression]:
    out = []
    for f in fields:
        if isinstance(f, str):
            # PyFlink accepts "a, b" strings in places; support plain names.
            out.extend(Column(part.strip()) for part in f.split(",") if part.strip())
        elif isinstance(f, Expression):
            out.append(f)
        else:
            raise TypeError(f"expected an Expression or a column name, got {f!r}")
    return out


class TableSchema:
    """Names and types of a table's columns."""

    def __init__(self, schema) -> None:
        self._schema = tuple(schema)

    def get_field_names(self) -> list[str]:
        return [n for n, _ in self._schema]

    def get_field_data_types(self) -> list:
        return [t for _, t in self._schema]

    def get_field_data_type(self, name: str):
        return dict(self._schema)[name]

    # PyFlink's ResolvedSchema names (Table.get_resolved_schema returns this same object)
    def get_column_count(self) -> int:
        return len(self._schema)

    def get_column_names(self) -> list[str]:
        return self.get_field_names()

    def get_column_data_types(self) -> list:
        return self.get_field_data_types()

    def __str__(self) -> str:
        return "(\n" + ",\n".join(f"  `{n}` {t}" for n, t in self._schema) + "\n)"


class Table:
    """A relational query over a :class:`TableEnvironment`.

    >>> from changeflow.table import EnvironmentSettings, TableEnvironment
    >>> from changeflow.table.expressions import col
    >>> t_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    >>> t = t_env.from_elements([(1, "a"), (2, "a")], ["v", "k"])
    >>> t.group_by(col("k")).select(col("k"), col("v").sum.alias("s")).get_schema().get_field_names()
    ['k', 's']
    """

    def __init__(self, plan: PlanNode, t_env: "TableEnvironment") -> None:
        self._plan = plan
        self._t_env = t_env

    @property
    def plan(self) -> PlanNode:
        return self._plan

    def _wrap(self, plan: PlanNode) -> "Table":
        return Table(plan, self._t_env)

    def __getattr__(self, name: str) -> Expression:
        """``tab.a``: the column ``a`` (PyFlink's), for names that are not Table methods."""
        if name.startswith("_"):
            raise AttributeError(name)
        names = self._plan.field_names
        if name not in names and name in UNSUPPORTED["Table"]:
            return refused_attribute("Table", name)
        if name not in names:
            raise AttributeError(f"The current table has no column named '{name}', available columns: "
                                 f"[{', '.join(names)}]")
        return Column(name)

    def __getitem__(self, name: str) -> Expression:
        """``tab['a']``: the column ``a``, also where its name is a method's (beyond PyFlink)."""
        if name not in self._plan.field_names:
            raise KeyError(f"The current table has no column named '{name}', available columns: "
                           f"[{', '.join(self._plan.field_names)}]")
        return Column(name)

    # --- relational operators -----------------------------------------------------------
    def select(self, *fields: Expression | str) -> "Table":
        """Project (and, with aggregates, globally aggregate) the table; ``col('*')`` and
        ``with_columns(...)`` / ``without_columns(...)`` stand for columns. An unnamed item of a
        projection is ``_c<position>``, as Flink's Table API names it (SQL's are ``EXPR$<position>``)."""
        exprs = columns_ops.expand(self._plan, _exprs(fields))
        if not any(e.contains_aggregate() for e in exprs):
            exprs = [e if e.output_name() else e.alias(f"_c{i}") for i, e in enumerate(exprs)]
        return self._wrap(builder.project(self._plan, exprs))

    def add_columns(self, *fields: Expression) -> "Table":
        return self._wrap(builder.add_columns(self._plan, _exprs(fields)))

    def add_or_replace_columns(self, *fields: Expression) -> "Table":
        """Add columns; one named as an existing column replaces it (:mod:`.columns_ops`)."""
        return self._wrap(columns_ops.add_or_replace_columns(self._plan, _exprs(fields)))

    def rename_columns(self, *fields: Expression) -> "Table":
        """Rename columns given as ``col('a').alias('b')``."""
        return self._wrap(columns_ops.rename_columns(self._plan, _exprs(fields)))

    def drop_columns(self, *fields: Expression) -> "Table":
        return self._wrap(columns_ops.drop_columns(self._plan, _exprs(fields)))

    # --- ordering and limits (:mod:`.ordering`; streaming: a Top-N needs a fetch) -----------
    def order_by(self, *fields: Expression | str) -> "Table":
        """Sort by ``fields`` (``col('a').desc``); in streaming mode only with a following fetch/limit."""
        return self._wrap(ordering.order_by(self._plan, _exprs(fields)))

    def offset(self, offset: int) -> "Table":
        return self._wrap(ordering.offset(self._plan, offset))

    def fetch(self, fetch: int) -> "Table":
        return self._wrap(ordering.fetch(self._plan, fetch))

    def limit(self, fetch: int, offset: int = 0) -> "Table":
        """``offset(offset).fetch(fetch)``."""
        return self.offset(offset).fetch(fetch)

    def where(self, predicate: Expression) -> "Table":
        return self._wrap(builder.filter_(self._plan, predicate))

    filter = where

    def group_by(self, *fields: Expression | str) -> "GroupedTable":
        return GroupedTable(self, _exprs(fields))

    def aggregate(self, func) -> "AggregatedTable":
        """A global aggregate with a Python aggregate function (``udaf``); close it with ``select``."""
        return AggregatedTable(self, [], func)

    def flat_aggregate(self, func) -> "FlatAggregateTable":
        """A global table aggregate (``udtaf``); close it with ``select``."""
        return FlatAggregateTable(self, [], func)

    # --- windows (changeflow/table/window_tables.py) --------------------------------------------
    def window(self, window) -> "GroupWindowedTable":
        """Group the rows by a group window (``Tumble``/``Slide``/``Session`` of :mod:`changeflow.table.window`);
        then ``group_by(col(alias), ...)`` and ``select``, with ``col(alias).start``/``.end``/``.rowtime``."""
        return GroupWindowedTable(self, window)

    def over_window(self, *over_windows) -> "OverWindowedTable":
        """Aggregate over an over window (``Over`` of :mod:`changeflow.table.window`); then ``select`` with
        ``col('v').sum.over(col(alias))``."""
        return OverWindowedTable(self, over_windows)

    def alias(self, field: str, *fields: str) -> "Table":
        names = [n.strip() for n in ",".join((field,) + fields).split(",") if n.strip()]
        return self._wrap(builder.rename(self._plan, names))

    # --- joins (PyFlink's Table.join and outer joins) -------------------------------------
    def join(self, right: "Table", join_predicate: Expression | None = None) -> "Table":
        """Inner join with ``right``; without a predicate, every pair (filter it with ``where``).

        As in Flink's Table API, the two tables' column names must be distinct
        (rename with :meth:`alias` first).
        """
        return self._join(right, "INNER", join_predicate)

    def left_outer_join(self, right: "Table", join_predicate: Expression | None = None) -> "Table":
        """Left outer join: unmatched rows of this table padded with NULLs on the right."""
        return self._join(right, "LEFT", join_predicate)

    def right_outer_join(self, right: "Table", join_predicate: Expression) -> "Table":
        """Right outer join: unmatched rows of ``right`` padded with NULLs on the left."""
        return self._join(right, "RIGHT", join_predicate)

    def full_outer_join(self, right: "Table", join_predicate: Expression) -> "Table":
        """Full outer join: unmatched rows of either side padded with NULLs."""
        return self._join(right, "FULL", join_predicate)

    # --- Python functions over each row (changeflow/table/lateral.py) ---------------------------
    def join_lateral(self, table_function_call, join_predicate: Expression | None = None) -> "Table":
        """Join each row with the rows a table function emits for it (a call, or the function with an alias)."""
        from changeflow.table import lateral
        return self._wrap(lateral.join_lateral(self._plan, table_function_call, join_predicate, "INNER"))

    def left_outer_join_lateral(self, table_function_call, join_predicate: Expression | None = None) -> "Table":
        """As :meth:`join_lateral`; a row the function emits nothing for is kept, with NULLs."""
        from changeflow.table import lateral
        return self._wrap(lateral.join_lateral(self._plan, table_function_call, join_predicate, "LEFT"))

    def flat_map(self, func) -> "Table":
        """The rows of a table function (a call, or the function taking the whole row) over each row."""
        from changeflow.table import lateral
        return self._wrap(lateral.flat_map(self._plan, func))

    def map(self, func) -> "Table":
        """One row per row from a scalar function (a call, or the function taking the whole row); a ROW
        result is expanded into its fields."""
        from changeflow.table import lateral
        return self._wrap(lateral.map_(self._plan, func))

    def _join(self, right: "Table", join_type: str, predicate: Expression | None) -> "Table":
        if not isinstance(right, Table):
            raise TypeError(f"a join needs a Table to join with, got {right!r}")
        if right._t_env is not self._t_env:
            raise PlanError("only tables of the same TableEnvironment can be joined")
        if predicate is not None and not isinstance(predicate, Expression):
            raise TypeError(f"join predicate must be an Expression, got {predicate!r}")
        if predicate is None and join_type in ("RIGHT", "FULL"):
            raise PlanError(f"a {join_type.lower()} outer join needs a join predicate")
        clash = sorted(set(self._plan.field_names) & set(right._plan.field_names))
        if clash:
            raise PlanError(f"join of tables with ambiguous column names {clash}; rename them with alias(...) "
                            f"first (left: {self._plan.field_names}, right: {right._plan.field_names})")
        return self._wrap(join_builder.join(self._plan, right._plan, join_type, predicate))

    # --- set operations (changeflow/table/set_ops.py) -------------------------------------
    def union(self, right: "Table") -> "Table":
        """Rows of either table, duplicates removed (SQL ``UNION``)."""
        return self._set_op("union", right)

    def union_all(self, right: "Table") -> "Table":
        """Rows of both tables, duplicates kept (SQL ``UNION ALL``)."""
        return self._set_op("union_all", right)

    def intersect(self, right: "Table") -> "Table":
        """Distinct rows present in both tables (SQL ``INTERSECT``)."""
        return self._set_op("intersect", right)

    def intersect_all(self, right: "Table") -> "Table":
        """Rows present in both tables, as many times as in both (SQL ``INTERSECT ALL``)."""
        return self._set_op("intersect_all", right)

    def minus(self, right: "Table") -> "Table":
        """Distinct rows of this table not in ``right`` (SQL ``EXCEPT``)."""
        return self._set_op("minus", right)

    def minus_all(self, right: "Table") -> "Table":
        """Rows of this table, each as many times as it has more copies than in ``right`` (``EXCEPT ALL``)."""
        return self._set_op("minus_all", right)

    def distinct(self) -> "Table":
        """The table's distinct rows (``SELECT DISTINCT *``)."""
        from changeflow.table import set_ops
        return self._wrap(set_ops.distinct(self))

    def _set_op(self, method: str, right: "Table") -> "Table":
        from changeflow.table import set_ops
        return self._wrap(set_ops.set_operation(method, self, right))

    # --- inspection and execution -------------------------------------------------------
    def get_schema(self) -> TableSchema:
        """The result's columns and types; in batch mode without time attributes, as Flink's batch planner."""
        schema = self._plan.schema
        if not self._t_env._planning.runs_streaming(self._plan):
            # A batch query has no time attributes: Flink types a rowtime column as a plain TIMESTAMP.
            from changeflow.plan.event_time import plain_time
            schema = tuple((n, plain_time(t)) for n, t in schema)
        return TableSchema(schema)

    def get_resolved_schema(self) -> TableSchema:
        """The result's columns and types (PyFlink's ``ResolvedSchema``; same as :meth:`get_schema`)."""
        return self.get_schema()

    def print_schema(self) -> None:
        print(self.get_schema())

    def print_explain(self, *extra_details) -> None:
        print(self.explain(*extra_details))

    def insert_into(self, table_path: str, overwrite: bool = False) -> "TablePipeline":
        """This table bound to the sink ``table_path``; ``.execute()`` runs the INSERT (:mod:`.table_pipeline`)."""
        from changeflow.table.table_pipeline import TablePipeline
        return TablePipeline(self, table_path, overwrite)

    def to_pandas(self) -> "pd.DataFrame":
        """Run the query; its final rows as a pandas DataFrame (an updating query's changes applied, as PyFlink)."""
        from changeflow.table.table_pipeline import to_pandas
        return to_pandas(self)

    def explain(self, *extra_details) -> str:
        """The plan with each operator's changelog mode and mini-batch setting."""
        return self._t_env._explain(self._plan)

    def execute(self) -> "TableResult":
        """Run the query; streaming mode runs one Structured Streaming query."""
        return self._t_env._execute(self._plan)

    def execute_insert(self, table_path: str, overwrite: bool = False,
                       conflict_strategy: "InsertConflictStrategy | None" = None) -> "TableResult":
        """Write this table's changes into the catalog table ``table_path`` (``INSERT INTO``).

        Runs in the background, as PyFlink: call ``.wait()`` on the result to block.
        ``conflict_strategy`` (an :class:`~changeflow.table.InsertConflictStrategy`,
        beyond PyFlink: Flink's Java ``executeInsert`` has it) is the statement's
        ``ON CONFLICT`` clause.
        """
        if overwrite:
            raise NotImplementedError("INSERT OVERWRITE is not supported; write into an empty table")
        conflict = None if conflict_strategy is None else conflict_strategy.get_behavior()
        return self._t_env._insert_table(table_path, self, conflict)

    def cache(self) -> "Table":
        """Caches the query's rows for later jobs (batch mode; beyond PyFlink: see :mod:`changeflow.table.cache`)."""
        # Imported on use: cache.py subclasses Table (a cycle inside this package).
        from changeflow.table.cache import cache_table

        return cache_table(self)

    def to_spark(self) -> "DataFrame":
        """The query as a Spark DataFrame.

        In batch mode, the result table. In streaming mode, a streaming DataFrame of
        changes: an ``op`` column (``+I``, ``-U``, ``+U``, ``-D``) then the columns.
        """
        return self._t_env._to_spark(self._plan)

    def __str__(self) -> str:
        """The name this table is registered under (``UnnamedTable$N``), as PyFlink's: a program may
        write ``"SELECT * FROM %s" % table``. Registered as a temporary view on first use."""
        name = self.__dict__.get("_registered_name")
        if name is None:
            name = f"UnnamedTable${next(_UNNAMED)}"
            self._t_env.create_temporary_view(name, self)
            self.__dict__["_registered_name"] = name
        return name


class GroupedTable:
    """The result of :meth:`Table.group_by`; :meth:`select` aggregates per group."""

    def __init__(self, table: Table, keys: list[Expression]) -> None:
        if not keys:
            raise PlanError("group_by needs at least one key; use select(...) for a global aggregate")
        self._table = table
        self._keys = keys

    def select(self, *fields: Expression | str) -> Table:
        """Aggregate per group; an unnamed item is ``EXPR$<n>``, n counting the unnamed items only (Flink's)."""
        unnamed = itertools.count()
        exprs = [e if e.output_name() else e.alias(f"EXPR${next(unnamed)}") for e in _exprs(fields)]
        plan = builder.aggregate(self._table.plan, self._keys, exprs)
        return self._table._wrap(plan)

    def aggregate(self, func) -> "AggregatedTable":
        """Aggregate each group with a Python aggregate function (``udaf``); close it with ``select``."""
        return AggregatedTable(self._table, self._keys, func)

    def flat_aggregate(self, func) -> "FlatAggregateTable":
        """Rows per group from a table aggregate function (``udtaf``); close it with ``select``."""
        return FlatAggregateTable(self._table, self._keys, func)
