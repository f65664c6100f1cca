"""Sink upsert materializer conformance cases (FLIP-558, ``INSERT ... ON CONFLICT``), shared by the
Flink recorder (``conformance/record_flink_upsert.py``) and changeflow's tests.

Every case is an ``INSERT INTO <sink> <query> [ON CONFLICT DO ...]`` into a ``print``
sink with a primary key, over the CSV tables of :data:`TABLES` (files written from
:data:`DATA` into the case's directory), with the case's configuration. The recorder
stores, per case, in ``conformance/goldens/upsert/<name>.json``:

* ``plan``: Flink's verdict at planning. Accepted: the ``Sink(...)`` line of Flink's
  optimized physical plan (``ExplainDetail.CHANGELOG_MODE``) and whether Flink's
  execution plan holds a ``SinkMaterializer`` operator. Rejected: the exception class
  and the first line of its message.
* ``input``: the query's own changelog (the query collected without the sink), which
  is what the materializer receives (at parallelism 1 in this order), and
* ``output``: the changes the print sink printed, or ``error`` when the job failed.

``compare`` says how changeflow's tests compare the output (of the materializer kernel
fed ``input``; end to end on Spark once the streaming runtime has the materializer):

* ``changelog``: exactly, in order: DO DEDUPLICATE acts per record, and at parallelism 1
  Flink's order is the input order;
* ``materialized``: as an upsert table by primary key: DO NOTHING / DO ERROR compact
  on watermarks, whose timing is Flink's, and changeflow decides at micro-batch
  boundaries; batch output is final rows in the hash operators' order;
* ``error``: Flink rejects the statement (``plan.error``) or fails the job
  (``error``); ``error_mentions`` are what changeflow's message must name.

This module imports neither engine.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, Tuple

__all__ = ["CASES", "DATA", "SINK_KEYS", "SINK_TYPES", "STRATEGIES", "TABLES", "UpsertCase"]

# Orders change product over time: the keep-last deduplication per order_id retracts an
# order's previous row, so rows of one product arrive and leave under different order ids.
ORDERS = (
    (1, "Laptop", "eu", 2, "2024-01-01 00:00:01"),
    (2, "Phone", "eu", 1, "2024-01-01 00:00:02"),
    (3, "Laptop", "us", 5, "2024-01-01 00:00:03"),
    (1, "Phone", "eu", 3, "2024-01-01 00:00:04"),
    (4, "Tablet", "us", 1, "2024-01-01 00:00:05"),
    (3, "Tablet", "us", 2, "2024-01-01 00:00:06"),
    (5, "Laptop", "eu", 4, "2024-01-01 00:00:07"),
    (4, "Laptop", "us", 6, "2024-01-01 00:00:08"),
)
# One row per order and product: under DO ERROR nothing conflicts once the changes are compacted.
ORDERS_UNIQUE = (
    (1, "Laptop", "eu", 2, "2024-01-01 00:00:01"),
    (2, "Phone", "eu", 1, "2024-01-01 00:00:02"),
    (1, "Tablet", "eu", 3, "2024-01-01 00:00:03"),
    (3, "Laptop", "us", 5, "2024-01-01 00:00:04"),
)

# Conflicts whose first row per product is never retracted: DO NOTHING keeps it.
ORDERS_FIRST_KEPT = (
    (1, "Laptop", "eu", 2, "2024-01-01 00:00:01"),
    (2, "Phone", "eu", 1, "2024-01-01 00:00:02"),
    (3, "Laptop", "us", 5, "2024-01-01 00:00:03"),
    (3, "Tablet", "us", 2, "2024-01-01 00:00:04"),
    (4, "Phone", "us", 1, "2024-01-01 00:00:05"),
)

DATA: Dict[str, Tuple[tuple, ...]] = {"orders.csv": ORDERS, "orders_unique.csv": ORDERS_UNIQUE,
                                      "orders_first_kept.csv": ORDERS_FIRST_KEPT}

_ORDER_COLUMNS = "order_id BIGINT, product STRING, region STRING, qty INT, ts TIMESTAMP(3), pt AS PROCTIME()"
TABLES: Dict[str, str] = {
    "orders": f"CREATE TABLE orders ({_ORDER_COLUMNS}) "
              "WITH ('connector' = 'filesystem', 'path' = '{tmp}/orders.csv', 'format' = 'csv')",
    "orders_wm": f"CREATE TABLE orders_wm ({_ORDER_COLUMNS}, WATERMARK FOR ts AS ts) "
                 "WITH ('connector' = 'filesystem', 'path' = '{tmp}/orders.csv', 'format' = 'csv')",
    "orders_unique_wm": f"CREATE TABLE orders_unique_wm ({_ORDER_COLUMNS}, WATERMARK FOR ts AS ts) "
                        "WITH ('connector' = 'filesystem', 'path' = '{tmp}/orders_unique.csv', 'format' = 'csv')",
    "orders_first_kept_wm": f"CREATE TABLE orders_first_kept_wm ({_ORDER_COLUMNS}, WATERMARK FOR ts AS ts) "
                            "WITH ('connector' = 'filesystem', 'path' = '{tmp}/orders_first_kept.csv', "
                            "'format' = 'csv')",
    "product_orders": "CREATE TABLE product_orders (product STRING, order_id BIGINT, "
                      "PRIMARY KEY (product) NOT ENFORCED) WITH ('connector' = 'print')",
    "product_qty": "CREATE TABLE product_qty (product STRING, qty BIGINT, "
                   "PRIMARY KEY (product) NOT ENFORCED) WITH ('connector' = 'print')",
    "order_rows": "CREATE TABLE order_rows (order_id BIGINT, product STRING, "
                  "PRIMARY KEY (order_id) NOT ENFORCED) WITH ('connector' = 'print')",
}
SINK_TYPES = {"product_orders": ("STRING", "BIGINT"), "product_qty": ("STRING", "BIGINT"),
              "order_rows": ("BIGINT", "STRING")}
SINK_KEYS = {"product_orders": ("product",), "product_qty": ("product",), "order_rows": ("order_id",)}

# The latest product of each order (keep-last deduplication): upsert key order_id.
LATEST_PRODUCT = ("SELECT product, order_id FROM (SELECT *, ROW_NUMBER() OVER "
                  "(PARTITION BY order_id ORDER BY pt DESC) AS rn FROM {source}) WHERE rn = 1")
# Quantity per product and region, written by product alone: the upsert key (product,
# region) is not projected, so the sink sees no upsert key at all.
QTY_BY_REGION = "SELECT product, CAST(SUM(qty) AS BIGINT) FROM {source} GROUP BY product, region"


@dataclass(frozen=True)
class UpsertCase:
    name: str
    sink: str
    query: str  # with {source}
    source: str = "orders"
    clause: str = ""  # "ON CONFLICT DO ..." or ""
    config: Dict[str, str] = field(default_factory=dict)
    mode: str = "streaming"
    compare: str = "changelog"
    why: str = "DO DEDUPLICATE acts per record; one source at parallelism 1 keeps input order"
    description: str = ""
    error_mentions: Tuple[str, ...] = ()
    plan_only: bool = False  # record Flink's planning verdict only (the run's order is not defined)

    @property
    def select(self) -> str:
        return self.query.format(source=self.source)

    @property
    def insert(self) -> str:
        return f"INSERT INTO {self.sink} {self.select}" + (f" {self.clause}" if self.clause else "")

    @property
    def tables(self) -> Tuple[str, ...]:
        return (self.source, self.sink)


CASES: Dict[str, UpsertCase] = {}


def _add(c: UpsertCase) -> None:
    CASES[c.name] = c


STRATEGIES: Dict[str, Dict[str, str]] = {
    "legacy": {"table.exec.sink.upsert-materialize-strategy.type": "LEGACY"},
    "value": {"table.exec.sink.upsert-materialize-strategy.type": "VALUE"},
    "map": {"table.exec.sink.upsert-materialize-strategy.type": "MAP"},
    # thresholds small enough that a key's history crosses them both ways
    "adaptive": {"table.exec.sink.upsert-materialize-strategy.type": "ADAPTIVE",
                 "table.exec.sink.upsert-materialize-strategy.adaptive.threshold.high": "2",
                 "table.exec.sink.upsert-materialize-strategy.adaptive.threshold.low": "1"},
}

for _strategy, _config in STRATEGIES.items():
    _add(UpsertCase(f"dedup_upsert_key_{_strategy}", "product_orders", LATEST_PRODUCT,
                    clause="ON CONFLICT DO DEDUPLICATE", config=_config,
                    description="latest product per order into a sink keyed by product: upsert key order_id"))
    _add(UpsertCase(f"dedup_no_upsert_key_{_strategy}", "product_qty", QTY_BY_REGION,
                    clause="ON CONFLICT DO DEDUPLICATE", config=_config,
                    description="per-region sums written by product: the query's upsert key is lost"))

# Flink's DO NOTHING / DO ERROR materializer stamps each record with the watermark at its
# arrival and compacts a key's records once a later watermark passes, so which records it
# compacts together depends on when its periodic watermarks fire (changeflow compacts a
# micro-batch). The data of these cases is chosen so that the final table does not depend
# on it: a key's first row is never retracted.
_WHY_WATERMARK = ("DO NOTHING / DO ERROR compact on watermarks (Flink) or micro-batch boundaries (changeflow); "
                  "the final table is the same whatever the watermarks' timing")
_add(UpsertCase("nothing_with_watermark", "product_orders", LATEST_PRODUCT, source="orders_first_kept_wm",
                clause="ON CONFLICT DO NOTHING", compare="materialized", why=_WHY_WATERMARK,
                description="keep the first row per product; later conflicting rows are dropped"))
_add(UpsertCase("error_without_conflict", "product_orders", LATEST_PRODUCT, source="orders_unique_wm",
                clause="ON CONFLICT DO ERROR", compare="materialized", why=_WHY_WATERMARK,
                description="transient disorder only: after compaction each product has one order"))
_add(UpsertCase("error_on_conflict", "product_orders", LATEST_PRODUCT, source="orders_wm",
                clause="ON CONFLICT DO ERROR", compare="error", why="two orders keep one product: the job fails",
                description="a real conflict fails the job, naming the key", error_mentions=("product",)))
_add(UpsertCase("force_insert_only", "order_rows", "SELECT order_id, product FROM {source}",
                config={"table.exec.sink.upsert-materialize": "FORCE"},
                description="FORCE materializes an insert-only query: a repeated key becomes +U"))
_add(UpsertCase("no_clause_without_require", "product_orders", LATEST_PRODUCT,
                config={"table.exec.sink.require-on-conflict": "false"},
                description="without require-on-conflict the materializer deduplicates"))
_add(UpsertCase("keyed_like_the_sink", "order_rows",
                "SELECT order_id, product FROM (SELECT *, ROW_NUMBER() OVER "
                "(PARTITION BY order_id ORDER BY pt DESC) AS rn FROM {source}) WHERE rn = 1",
                clause="ON CONFLICT DO DEDUPLICATE",
                description="upsert key = primary key: no materializer, the clause is shown"))
_add(UpsertCase("batch_dedup", "product_qty", QTY_BY_REGION, clause="ON CONFLICT DO DEDUPLICATE", mode="batch",
                compare="materialized", why="batch: final rows in the hash operators' order",
                description="batch mode needs no materializer"))
_add(UpsertCase("batch_nothing_without_watermark", "product_orders",
                "SELECT product, MAX(order_id) FROM {source} GROUP BY product", clause="ON CONFLICT DO NOTHING",
                mode="batch", compare="materialized", why="batch: final rows in the hash operators' order",
                description="batch mode accepts DO NOTHING without watermarks"))

# Joins and unions: where the materializer goes follows the upsert keys Flink derives for
# them. Over two sources Flink's order is not defined, so only the plan is recorded.
_WHY_PLAN = "two sources: only Flink's planning verdict is compared"
_BY_ORDER = "(SELECT order_id, MAX(product) AS product FROM {source} GROUP BY order_id)"
for _name, _sink, _query, _description in (
    ("join_on_a_non_key_column", "order_rows",
     f"SELECT o.order_id, p.product FROM {_BY_ORDER} o "
     "JOIN (SELECT product FROM {source} GROUP BY product) p ON o.product = p.product",
     "rows are shuffled by product, so order_id is no upsert key of the join: a materializer"),
    ("left_join_on_the_key", "order_rows",
     f"SELECT o.order_id, q.product FROM {_BY_ORDER} o LEFT JOIN {_BY_ORDER.replace('MAX', 'MIN')} q "
     "ON o.order_id = q.order_id",
     "both sides unique on the join key order_id: it stays an upsert key, no materializer"),
    ("union_of_keyed_inputs", "order_rows",
     f"SELECT order_id, product FROM {_BY_ORDER} UNION ALL SELECT order_id, product FROM {_BY_ORDER}",
     "UNION ALL has no upsert key: a materializer"),
):
    _add(UpsertCase(_name, _sink, _query, clause="ON CONFLICT DO DEDUPLICATE", compare="materialized",
                    why=_WHY_PLAN, description=_description, plan_only=True))

_WHY_REJECTED = "Flink rejects the statement at planning"
for _name, _sink, _query, _source, _clause, _config, _mentions in (
    ("missing_on_conflict", "product_orders", LATEST_PRODUCT, "orders", "", {},
     ("product_orders", "Primary key: [product]", "upsert key: [order_id]", "ON CONFLICT")),
    ("missing_on_conflict_no_upsert_key", "product_qty", QTY_BY_REGION, "orders", "", {},
     ("product_qty", "Primary key: [product]", "ON CONFLICT")),
    ("nothing_without_watermark", "product_orders", LATEST_PRODUCT, "orders", "ON CONFLICT DO NOTHING", {},
     ("DO NOTHING", "watermark", "default_catalog.default_database.orders")),
    ("error_without_watermark", "product_orders", LATEST_PRODUCT, "orders", "ON CONFLICT DO ERROR", {},
     ("DO ERROR", "watermark", "default_catalog.default_database.orders")),
    ("clause_on_insert_only_query", "order_rows", "SELECT order_id, product FROM {source}", "orders",
     "ON CONFLICT DO DEDUPLICATE", {}, ("ON CONFLICT", "upsert sink", "order_rows")),
    ("unknown_action", "product_orders", LATEST_PRODUCT, "orders", "ON CONFLICT DO UPDATE", {},
     ("ON CONFLICT", "UPDATE", "line 1, column")),
    ("conflict_target", "product_orders", LATEST_PRODUCT, "orders", "ON CONFLICT (product) DO NOTHING", {},
     ("ON CONFLICT", "line 1, column")),
):
    _add(UpsertCase(_name, _sink, _query, source=_source, clause=_clause, config=_config, compare="error",
                    why=_WHY_REJECTED, error_mentions=_mentions))

