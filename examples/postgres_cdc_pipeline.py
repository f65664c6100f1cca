"""PostgreSQL CDC -> a join and a two-level aggregation -> an upsert into PostgreSQL, run on Spark by changeflow.

Two tables of a shop, ``customers`` and ``orders``, are read as change streams
(``'connector' = 'postgres-cdc'``: their rows, then every insert, update and delete).
A Flink SQL query joins them and aggregates twice: each customer's revenue, then per
region the number of customers who ordered and their revenue. The ``jdbc`` sink
upserts the result into ``region_stats``, keyed by region. While the job runs, the
script changes the shop: new orders, a corrected amount, a cancelled order and a
customer who moves to another region (every level retracts and re-emits). The job's
table then equals the same query run by PostgreSQL over the shop's tables.

Run it against a PostgreSQL with ``wal_level = logical`` and a user with the
REPLICATION attribute::

    python examples/postgres_cdc_pipeline.py HOST PORT USER PASSWORD DATABASE

It creates the tables ``shop_customers``, ``shop_orders`` and ``shop_region_stats`` (read and
written as the Flink tables ``customers``, ``orders`` and ``region_stats``), a publication
``shop_cdc`` and the replication slots ``shop_customers`` and ``shop_orders``, and
drops the slots and the publication when it is done (a slot keeps WAL on the server).
"""

from __future__ import annotations

import sys
import time

QUERY = """
SELECT region, COUNT(*) AS customers, SUM(revenue) AS revenue FROM (
    SELECT c.region, o.customer_id, SUM(o.amount) AS revenue
    FROM orders AS o JOIN customers AS c ON o.customer_id = c.id
    GROUP BY c.region, o.customer_id)
GROUP BY region"""


def _setup(db) -> None:
    db.execute("DROP TABLE IF EXISTS shop_customers, shop_orders, shop_region_stats")
    db.execute("CREATE TABLE shop_customers (id INT PRIMARY KEY, name TEXT, region TEXT)")
    db.execute("CREATE TABLE shop_orders (id INT PRIMARY KEY, customer_id INT, amount BIGINT)")
    db.execute("CREATE TABLE shop_region_stats (region TEXT PRIMARY KEY, customers BIGINT, revenue BIGINT)")
    for table in ("shop_customers", "shop_orders"):  # the whole row before each update and delete: -U/-D need it
        db.execute(f"ALTER TABLE {table} REPLICA IDENTITY FULL")
    db.execute("DROP PUBLICATION IF EXISTS shop_cdc")
    db.execute("CREATE PUBLICATION shop_cdc FOR TABLE shop_customers, shop_orders")
    db.execute("INSERT INTO shop_customers VALUES (1, 'ann', 'north'), (2, 'bob', 'south'), (3, 'cy', 'north'), "
               "(4, 'di', 'east')")
    db.execute("INSERT INTO shop_orders VALUES (10, 1, 30), (11, 2, 15), (12, 1, 5), (13, 3, 40), (14, 4, 8)")


def _change_the_shop(db) -> None:
    db.execute("INSERT INTO shop_orders VALUES (15, 2, 25), (16, 4, 12)")
    db.execute("UPDATE shop_orders SET amount = 50 WHERE id = 13")  # a corrected amount
    db.execute("DELETE FROM shop_orders WHERE id = 14")  # a cancelled order
    db.execute("UPDATE shop_customers SET region = 'south' WHERE id = 1")  # ann moves: both regions change


def _expected(db) -> list[tuple]:
    return sorted(db.execute("SELECT c.region, COUNT(DISTINCT o.customer_id), SUM(o.amount) FROM shop_orders o "
                             "JOIN shop_customers c ON o.customer_id = c.id GROUP BY c.region"))


def main(host: str, port: int, user: str, password: str, database: str, spark_session=None,
         timeout_s: float = 600) -> list[tuple]:
    """Run the pipeline, change the shop while it runs; the job's ``region_stats`` once it equals the query's."""
    import psycopg

    from changeflow.table import EnvironmentSettings, TableEnvironment

    class Db:
        def execute(self, statement: str) -> list[tuple]:
            with psycopg.connect(host=host, port=port, user=user, password=password, dbname=database,
                                 autocommit=True) as conn, conn.cursor() as cur:
                cur.execute(statement)  # type: ignore[arg-type]  # the example's own statements
                return cur.fetchall() if cur.description else []

    db = Db()
    _setup(db)
    t_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode(), spark_session=spark_session)
    common = (f"'connector' = 'postgres-cdc', 'hostname' = '{host}', 'port' = '{port}', 'username' = '{user}', "
              f"'password' = '{password}', 'database-name' = '{database}', 'schema-name' = 'public', "
              f"'decoding.plugin.name' = 'pgoutput', 'debezium.publication.name' = 'shop_cdc'")
    t_env.execute_sql(f"CREATE TABLE customers (id INT, name STRING, region STRING) "
                      f"WITH ({common}, 'table-name' = 'shop_customers', 'slot.name' = 'shop_customers')")
    t_env.execute_sql(f"CREATE TABLE orders (id INT, customer_id INT, amount BIGINT) "
                      f"WITH ({common}, 'table-name' = 'shop_orders', 'slot.name' = 'shop_orders')")
    t_env.execute_sql(f"CREATE TABLE region_stats (region STRING, customers BIGINT, revenue BIGINT, "
                      f"PRIMARY KEY (region) NOT ENFORCED) WITH ('connector' = 'jdbc', "
                      f"'url' = 'jdbc:postgresql://{host}:{port}/{database}', 'table-name' = 'shop_region_stats', "
                      f"'username' = '{user}', 'password' = '{password}')")
    job = t_env.execute_sql("INSERT INTO region_stats" + QUERY).get_job_client()
    try:
        for step in (None, _change_the_shop):
            if step is not None:
                step(db)
            deadline = time.monotonic() + timeout_s
            while sorted(db.execute("SELECT * FROM shop_region_stats")) != _expected(db):
                if job.get_job_status() == "FAILED":
                    job.wait()  # raises the job's error
                if time.monotonic() > deadline:
                    raise TimeoutError("region_stats did not reach the query's result in time")
                time.sleep(0.5)
            print("region_stats:", sorted(db.execute("SELECT * FROM shop_region_stats")))
        return sorted(db.execute("SELECT * FROM shop_region_stats"))
    finally:
        job.cancel()
        for _ in range(20):  # a slot still being read (the job's last read) cannot be dropped yet
            try:
                db.execute("SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots "
                           "WHERE slot_name IN ('shop_customers', 'shop_orders')")
                break
            except psycopg.errors.ObjectInUse:
                time.sleep(0.5)
        db.execute("DROP PUBLICATION IF EXISTS shop_cdc")


if __name__ == "__main__":
    if len(sys.argv) != 6:
        sys.exit(__doc__)
    main(sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5])
