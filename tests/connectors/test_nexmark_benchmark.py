"""The pieces of ``benchmarks/nexmark.py`` that need neither Spark nor Flink: the event file, the
rewritten nexmark statements, the materialized results and the CPU clock."""

import os
import subprocess
import sys
import time

import pytest

from benchmarks import nexmark_workload as W
from changeflow.connectors.formats import JsonFormat
from changeflow.connectors.nexmark import NexmarkSource
from changeflow.sql.ddl import parse_create_table

# Shaped as nexmark's files (ddl_gen.sql, ddl_views.sql, a query), which are not shipped here.
DDL_GEN = """CREATE TABLE datagen (
    event_type int,
    person ROW<id BIGINT, name VARCHAR, emailAddress VARCHAR, creditCard VARCHAR, city VARCHAR, state VARCHAR,
               `dateTime` TIMESTAMP(3), extra VARCHAR>,
    auction ROW<id BIGINT, itemName VARCHAR, description VARCHAR, initialBid BIGINT, reserve BIGINT,
                `dateTime` TIMESTAMP(3), expires TIMESTAMP(3), seller BIGINT, category BIGINT, extra VARCHAR>,
    bid ROW<auction BIGINT, bidder BIGINT, price BIGINT, channel VARCHAR, url VARCHAR, `dateTime` TIMESTAMP(3),
            extra VARCHAR>,
    `dateTime` AS CASE WHEN event_type = 0 THEN person.`dateTime`
                       WHEN event_type = 1 THEN auction.`dateTime` ELSE bid.`dateTime` END,
    WATERMARK FOR `dateTime` AS `dateTime` - INTERVAL '4' SECOND
) WITH (
    'connector' = 'nexmark',
    'first-event.rate' = '${TPS}',
    'events.num' = '${EVENTS_NUM}'
);"""
DDL_VIEWS = """CREATE VIEW bid AS
SELECT bid.auction, bid.bidder, bid.price, bid.channel, bid.url, `dateTime`, bid.extra
FROM ${NEXMARK_TABLE} WHERE event_type = 2;"""
QUERY = """-- a query; its sink
CREATE TABLE nexmark_q (auction BIGINT, v VARCHAR) WITH ('connector' = 'blackhole');

CREATE TABLE side_input (
  key BIGINT,
  `value` VARCHAR
) WITH (
  'connector.type' = 'filesystem',
  'connector.path' = 'file://${FLINK_HOME}/data/side_input.txt',
  'format.type' = 'csv'
);

CREATE TABLE out_files (auction BIGINT) WITH (
  'connector' = 'filesystem',
  'path' = 'file://${NEXMARK_DIR}/data/output/${SUBMIT_TIME}/bid/',
  'format' = 'csv'
);

INSERT INTO nexmark_q
SELECT auction, 'a;b' FROM bid;"""


@pytest.fixture
def query_dir(tmp_path):
    for name, text in (("ddl_gen.sql", DDL_GEN), ("ddl_views.sql", DDL_VIEWS), ("q.sql", QUERY)):
        (tmp_path / name).write_text(text)
    return str(tmp_path)


def test_statements_rewrite_only_connector_options(query_dir):
    statements = W.statements(query_dir, "q", "/e/events.json", "/e/side.txt", "/e/out")
    assert len(statements) == 6
    datagen, view, sink, side, files, insert = statements
    assert datagen.startswith(DDL_GEN[:DDL_GEN.index(") WITH (")])  # columns and watermark unchanged
    assert datagen.endswith(") WITH ('connector' = 'filesystem', 'path' = '/e/events.json', 'format' = 'json')")
    assert view == DDL_VIEWS.replace("${NEXMARK_TABLE}", "datagen").rstrip(";")
    assert sink == "CREATE TABLE nexmark_q (auction BIGINT, v VARCHAR) WITH ('connector' = 'blackhole')"
    assert side.endswith("WITH ('connector' = 'filesystem', 'path' = '/e/side.txt', 'format' = 'csv')")
    assert "'path' = '/e/out'" in files and "${" not in files
    assert insert == "INSERT INTO nexmark_q\nSELECT auction, 'a;b' FROM bid"
    assert W.select_of(insert) == "SELECT auction, 'a;b' FROM bid"
    for ddl in (datagen, sink, side):
        parse_create_table(ddl)  # changeflow's DDL parser takes them


def test_event_file_holds_the_generators_events_as_the_datagen_table_reads_them(tmp_path, query_dir):
    path = str(tmp_path / "events.json")
    W.write_events(path, 300, chunk=128)
    ddl = W.statements(query_dir, "q", path, "", "")[0]
    table, _ = parse_create_table(ddl)
    schema = [(c.name, c.data_type) for c in table.schema.physical_columns()]
    with open(path, encoding="utf-8") as f:
        read = JsonFormat(ignore_parse_errors=False).decode(f.read(), path, schema)
    generator, _ = parse_create_table(ddl.split(") WITH (")[0] + f") WITH ('connector' = 'nexmark', "
                                      f"'events.num' = '300', 'base-time' = '{W.BASE_TIME_MS}')")
    assert read == NexmarkSource(generator, streaming=False).rows()
    assert [r[0] for r in read[:5]] == [1, 1, 2, 2, 2]
    times = [next(x for x in r[1:] if x is not None)[6 if r[0] == 0 else 5] for r in read]
    assert times == sorted(times)  # one file in event-time order: the watermark sees no late event


def test_side_input_is_nexmarks():
    assert W.SIDE_INPUT_ROWS == 10_000


def test_materialize_and_compare_ignore_order_and_representation():
    import datetime
    import decimal

    a = W.materialize([("+I", (decimal.Decimal("1.500"), datetime.datetime(2026, 1, 1), 0.1 + 0.2)),
                       ("+I", (1, None, "x")), ("-D", (1, None, "x"))])
    b = W.materialize([("+I", (decimal.Decimal("1.5"), datetime.datetime(2026, 1, 1), 0.3))])
    assert a == b and W.encode(a) == [[["1.5", "2026-01-01T00:00:00", 0.3], 1]]


def test_upsert_changelog_materializes_by_its_key_as_the_retract_one():
    # Flink's collect() gives q9's Top-1 as UPDATE_AFTER only (keyed on the auction id); changeflow
    # retracts the previous row first: both end in one row per auction
    upsert = [("+I", (1, 10)), ("+U", (1, 20)), ("+I", (2, 5)), ("+U", (1, 30)), ("-D", (2, 5))]
    retract = [("+I", (1, 10)), ("-U", (1, 10)), ("+U", (1, 20)), ("+I", (2, 5)), ("-U", (1, 20)),
               ("+U", (1, 30)), ("-D", (2, 5))]
    assert W.materialize(upsert, (0,)) == W.materialize(retract, (0,)) == W.materialize(retract)
    assert W.encode(W.materialize(upsert, (0,))) == [[[1, 30], 1]]
    assert W.UPSERT_KEYS["q9"] == (0,)


def test_tree_cpu_seconds_counts_children_running_and_ended():
    before = W.tree_cpu_seconds()
    busy = "import time\nt = time.process_time()\nwhile time.process_time() - t < 0.3: pass\n"
    child = subprocess.Popen([sys.executable, "-c", busy])
    time.sleep(0.1)
    assert W.tree_cpu_seconds() >= before
    child.wait()
    assert W.tree_cpu_seconds() - before >= 0.25  # the ended child's time, through cutime
    assert W.tree_cpu_seconds(os.getpid()) >= W.tree_cpu_seconds(child.pid)


def test_tree_cpu_counts_a_grandchild_whose_parent_ignores_sigchld():
    # As Spark's Python daemon: it ignores SIGCHLD, so its ended workers' CPU reaches no cutime.
    busy = "import time\nt = time.process_time()\nwhile time.process_time() - t < 0.6: pass\n"
    daemon = ("import os, signal, subprocess, sys, time\nsignal.signal(signal.SIGCHLD, signal.SIG_IGN)\n"
              f"p = subprocess.Popen([sys.executable, '-c', {busy!r}])\n"
              "while True:\n    try:\n        os.kill(p.pid, 0)\n    except OSError:\n        break\n"
              "    time.sleep(0.02)\n")
    own = os.times()
    before = W.tree_cpu_seconds() - own.user - own.system
    with W.TreeCpu(interval=0.05) as cpu:
        subprocess.run([sys.executable, "-c", daemon], check=True)
    assert cpu.seconds() >= 0.55   # the grandchild's 0.6 s, to its last sample
    own = os.times()
    # The before/after clock sees the daemon's own start-up only: the grandchild's CPU is gone.
    assert W.tree_cpu_seconds() - own.user - own.system - before < 0.5


def test_tree_cpu_counts_a_reaped_child_once():
    busy = "import time\nt = time.process_time()\nwhile time.process_time() - t < 0.5: pass\n"
    with W.TreeCpu(interval=0.05) as cpu:
        subprocess.run([sys.executable, "-c", busy], check=True)
    assert 0.45 <= cpu.seconds() < 0.5 + 0.5   # once: through this process's cutime, not also its samples


def test_error_line_takes_the_java_exception():
    e = RuntimeError("An error occurred while calling o9.executeSql.\n: org.apache.flink.table.api."
                     "ValidationException: SQL validation failed. Bad.\n\tat org...")
    assert W.error_line(e) == "org.apache.flink.table.api.ValidationException: SQL validation failed. Bad."
    assert W.error_line(ValueError("plain\nmore")) == "ValueError: plain"
