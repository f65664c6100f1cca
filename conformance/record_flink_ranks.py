"""Record Flink 2.3's changelogs for deduplication and Top-N as golden JSON files.

Run with PyFlink 2.3's python first on PATH, from the repository root::

    python conformance/record_flink_ranks.py            # all cases
    python conformance/record_flink_ranks.py topn_append_rownum
    python conformance/record_flink_ranks.py --list

Every case is a SQL query over a view of ``from_elements`` rows (``src``; ``src_pt``
adds ``pt AS PROCTIME()``), run in streaming mode with ``parallelism.default = 1``
and collected with ``execute().collect()``. A retracting input is made by a GROUP BY
below the Top-N. The golden (``conformance/goldens/ranks/<case>.json``) holds the SQL,
the input rows, an ``operator`` spec that says which changeflow operators compute
the same query (so the replay test needs no SQL front end), Flink's EXPLAIN of the
rank/deduplicate node, and the emitted changes in order.

``operator`` spec::

    {"aggregate": {"keys": [...], "sum": column, "as": name} | null,   # the GROUP BY below
     "node": "deduplicate", "keys": [...], "keep_last": bool}
    {"aggregate": ..., "node": "rank", "partition": [...],
     "order": [[column, ascending, nulls_first], ...], "start": int, "end": int,
     "rank_column": name | null}

Flink facts these recordings showed (Flink 2.3.0):

* keep-last deduplication compares the whole row, materialized proctime included,
  with the stored one and drops the update when they are equal: a repeated row
  is dropped only when it arrives in the same millisecond, so the inputs here
  never repeat a key's previous row;
* ``ORDER BY x`` (ASC) puts nulls first, DESC puts them last;
* RetractableTopNFunction with ``rank_start > 1`` and without the row number
  emits the stored row objects themselves and so changes their row kind in the
  heap state; a later retraction then no longer finds its row and emits nothing:
  ``topn_retract_offset``'s changelog retracts rows it never emitted (the test
  compares changeflow with the consistent ``topn_retract_offset_rownum``);
* Flink's Rank has no mini-batch variant: with mini-batch on it still emits per
  row (deduplication does fold: one change per key per bundle);
* mini-batch deduplication emits a bundle's keys in hash-map order.

Mini-batch cases use ``allow-latency`` of an hour and a size larger than the
input, so the whole input is one bundle (the bundle boundary falls before the
first row: Flink's processing-time MiniBatchAssigner emits its first watermark
then).
"""

from __future__ import annotations

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
GOLDEN_DIR = os.path.join(HERE, "goldens", "ranks")
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

from conformance.recording import FLINK_VERSION, case_names, new_env, record_each  # noqa: E402

MINI_BATCH = {"table.exec.mini-batch.enabled": "true", "table.exec.mini-batch.allow-latency": "1 h",
              "table.exec.mini-batch.size": "1000"}

# No row repeats the previous row of its key: Flink's keep-last deduplication drops
# such a repeat only when its proctime is the same millisecond (the equaliser
# compares the materialized proctime too), which depends on timing.
KV = ("k STRING, v INT", [("a", 1), ("b", 2), ("a", 3), ("b", 5), ("a", 6), ("c", 7), ("a", 4), ("b", 8)])
# rows of (k, item, x): items per k whose sums rise and fall (x may be negative)
SALES = ("k STRING, item STRING, x INT", [
    ("a", "p", 5), ("a", "q", 3), ("a", "r", 4), ("a", "s", 1), ("b", "p", 2),
    ("a", "q", 4), ("a", "p", -4), ("a", "t", 6), ("a", "r", -4), ("b", "q", 2),
    ("a", "s", 9), ("a", "t", -6), ("b", "p", 1),
])
# rows of (k, name, score): ties and nulls in the sort key
SCORES = ("k STRING, name STRING, score INT", [
    ("a", "n1", 10), ("a", "n2", 20), ("a", "n3", 10), ("a", "n4", None), ("a", "n5", 30),
    ("a", "n6", 20), ("b", "m1", 5), ("a", "n7", 25), ("a", "n8", None), ("b", "m2", 5),
    ("a", "n9", 40), ("b", "m3", 6),
])

CASES = {}


def case(name, data, sql, operator, config=None, description=""):
    CASES[name] = {"name": name, "data": data, "sql": sql, "operator": operator, "config": dict(config or {}),
                   "description": description}


def _dedup(keep_last, mini=False, data=KV):
    order = "DESC" if keep_last else "ASC"
    name = f"dedup_keep_{'last' if keep_last else 'first'}{'_minibatch' if mini else ''}"
    case(name, data,
         f"SELECT k, v FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY k ORDER BY pt {order}) AS rn "
         f"FROM src_pt) WHERE rn = 1",
         {"aggregate": None, "node": "deduplicate", "keys": ["k"], "keep_last": keep_last},
         MINI_BATCH if mini else None,
         f"keep {'last' if keep_last else 'first'} row per k on processing time"
         f"{', mini-batch (one bundle)' if mini else ''}")


_dedup(False)
_dedup(True)
_dedup(False, mini=True)
_dedup(True, mini=True)


def _topn(name, data, inner, columns, partition, order_sql, order, start, end, rank_column, aggregate=None,
          config=None, description=""):
    where = f"rn <= {end}" if start == 1 else f"rn BETWEEN {start} AND {end}"
    select = ", ".join(columns + ([rank_column] if rank_column else []))
    # the SQL aliases the row number as rn; a selected rank column is named rn too
    sql = (f"SELECT {select} FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY {', '.join(partition)} "
           f"ORDER BY {order_sql}) AS rn FROM {inner}) WHERE {where}")
    case(name, data, sql,
         {"aggregate": aggregate, "node": "rank", "partition": partition, "order": order, "start": start,
          "end": end, "rank_column": rank_column},
         config, description)


_topn("topn_append", SCORES, "src", ["k", "name", "score"], ["k"], "score DESC", [["score", False, False]],
      1, 3, None, description="top-3 by score DESC over insert-only input: rows enter, pushed-out rows -D")
_topn("topn_append_rownum", SCORES, "src", ["k", "name", "score"], ["k"], "score DESC", [["score", False, False]],
      1, 3, "rn", description="top-3 with the row number: rows whose rank shifts are updated")
_topn("topn_append_ties_asc_nulls", SCORES, "src", ["k", "name", "score"], ["k"], "score ASC",
      [["score", True, True]], 1, 4, "rn",
      description="top-4 by score ASC (Flink's default NULLS FIRST for ASC): ties by arrival, nulls first")
_topn("topn_append_nulls_last", SCORES, "src", ["k", "name", "score"], ["k"], "score ASC NULLS LAST, name DESC",
      [["score", True, False], ["name", False, False]], 1, 3, None,
      description="two sort columns, explicit NULLS LAST")
_topn("topn_append_offset", SCORES, "src", ["k", "name", "score"], ["k"], "score DESC", [["score", False, False]],
      2, 3, None, description="rank_start > 1 without the row number: positional -U/+U pairs")
_topn("topn_append_offset_rownum", SCORES, "src", ["k", "name", "score"], ["k"], "score DESC",
      [["score", False, False]], 2, 3, "rn", description="rank_start > 1 with the row number")

_SALES_AGG = "(SELECT k, item, SUM(x) AS total FROM src GROUP BY k, item)"
_AGG = {"keys": ["k", "item"], "sum": "x", "as": "total"}
_topn("topn_retract", SALES, _SALES_AGG, ["k", "item", "total"], ["k"], "total DESC", [["total", False, False]],
      1, 2, None, _AGG, description="top-2 items by SUM over a retracting GROUP BY: a retraction promotes row 3")
_topn("topn_retract_rownum", SALES, _SALES_AGG, ["k", "item", "total"], ["k"], "total DESC",
      [["total", False, False]], 1, 2, "rn", _AGG, description="as topn_retract with the row number")
_topn("topn_retract_offset_rownum", SALES, _SALES_AGG, ["k", "item", "total"], ["k"], "total DESC",
      [["total", False, False]], 2, 3, "rn", _AGG, description="ranks 2..3 over retracting input")
_topn("topn_retract_offset", SALES, _SALES_AGG, ["k", "item", "total"], ["k"], "total DESC",
      [["total", False, False]], 2, 3, None, _AGG, description="ranks 2..3 over retracting input, no row number")
_topn("topn_append_minibatch", SCORES, "src", ["k", "name", "score"], ["k"], "score DESC", [["score", False, False]],
      1, 3, "rn", config=MINI_BATCH, description="top-3 with mini-batch on (one bundle)")
_topn("topn_retract_minibatch", SALES, _SALES_AGG, ["k", "item", "total"], ["k"], "total DESC",
      [["total", False, False]], 1, 2, None, _AGG, config=MINI_BATCH,
      description="top-2 over a retracting GROUP BY with mini-batch on (one bundle)")


def _to_json(v):
    if v is None or isinstance(v, (bool, int, float, str)):
        return v
    raise TypeError(f"cannot encode {v!r}")


def run(spec):
    t_env = new_env("streaming", spec["config"])
    schema, rows = spec["data"]
    src = t_env.from_elements(rows, _row_type(schema))
    t_env.create_temporary_view("src", src)
    t_env.create_temporary_view("src_pt", t_env.sql_query("SELECT *, PROCTIME() AS pt FROM src"))
    table = t_env.sql_query(spec["sql"])
    plan = table.explain()
    optimized = plan.split("== Optimized Execution Plan ==")[-1].splitlines()
    rank_lines = [ln.strip().lstrip(":+- ") for ln in optimized
                  if ln.strip().lstrip(":+- ").startswith(("Rank(", "Deduplicate("))]
    changes = []
    with table.execute().collect() as results:
        for row in results:
            changes.append([str(row.get_row_kind()), [_to_json(x) for x in row]])
    resolved = table._j_table.getResolvedSchema()
    return {
        "case": spec["name"],
        "description": spec["description"],
        "sql": spec["sql"],
        "config": spec["config"],
        "input": {"schema": schema, "rows": [list(r) for r in rows]},
        "operator": spec["operator"],
        "flink_plan": rank_lines,
        "columns": [c.getName() for c in resolved.getColumns()],
        "types": [c.getDataType().toString() for c in resolved.getColumns()],
        "changes": changes,
        "flink_version": FLINK_VERSION,
    }


def _row_type(schema):
    from pyflink.table import DataTypes
    types = {"STRING": DataTypes.STRING(), "INT": DataTypes.INT(), "BIGINT": DataTypes.BIGINT()}
    fields = []
    for part in schema.split(","):
        name, type_name = part.split()
        fields.append(DataTypes.FIELD(name, types[type_name]))
    return DataTypes.ROW(fields)


def _summary(golden: dict) -> str:
    return "\n".join([str(golden["flink_plan"])] + [f"    {kind}{values}" for kind, values in golden["changes"]])


def main(argv=None):
    names = case_names(argv, CASES, __doc__.split("\n\n")[0])
    if names is None:
        return 0
    return record_each(CASES, names, GOLDEN_DIR, run, summary=_summary)


if __name__ == "__main__":
    sys.exit(main())
