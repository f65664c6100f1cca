"""What ``nexmark.py`` (changeflow) and ``nexmark_flink.py`` (Flink 2.3) share: the statements
of a Nexmark query, rewritten to read an event file, the materialized result of a changelog,
and CPU time from ``/proc``.

Standard library only at import time: the Flink half runs under PyFlink's own Python, which
has no changeflow. Only :func:`write_events` imports changeflow (its Nexmark generator).

The query text is the nexmark project's (https://github.com/nexmark/nexmark, module
``nexmark-flink``, ``src/main/resources/queries``: ``ddl_gen.sql``, ``ddl_views.sql``,
``q0.sql`` .. ``q23.sql``; Apache License 2.0). It is not copied into this repository: the
benchmark reads it from a checkout of nexmark (``--queries``), unchanged but for connector
options (:func:`statements`):

* the ``datagen`` table's ``WITH`` clause (``'connector' = 'nexmark'`` and the ``${...}``
  generator options) becomes a ``filesystem`` table over the event file (``json``); its
  columns, computed ``dateTime`` and watermark (``dateTime - INTERVAL '4' SECOND``) stay;
* ``${NEXMARK_TABLE}`` in the views is ``datagen``;
* q10's partitioned filesystem sink writes under a temporary directory;
* q13's ``side_input`` table (Flink's legacy ``connector.type`` options, which Flink 2
  no longer has) becomes ``'connector' = 'filesystem'``, ``'format' = 'csv'`` over the file
  that nexmark's ``SideInputGenerator`` writes (``i,i`` for i below 10,000).

>>> ddl = "CREATE TABLE datagen (a INT) WITH (\\n 'connector' = 'nexmark',\\n 'events.num' = '${EVENTS_NUM}'\\n);"
>>> rewrite_datagen(ddl, "/d/events.json")
"CREATE TABLE datagen (a INT) WITH ('connector' = 'filesystem', 'path' = '/d/events.json', 'format' = 'json')"
>>> split_statements("-- a comment; a semicolon\\nCREATE VIEW v AS SELECT 1;\\nINSERT INTO t SELECT ';' FROM v;")
['CREATE VIEW v AS SELECT 1', "INSERT INTO t SELECT ';' FROM v"]
>>> sorted(materialize([("+I", (1, "a")), ("+I", (2, "b")), ("-U", (1, "a")), ("+U", (1, "c"))]).items())
[((1, 'c'), 1), ((2, 'b'), 1)]
"""

from __future__ import annotations

import datetime
import decimal
import math
import os
import re
import threading
import time
from collections import Counter

QUERIES = [f"q{i}" for i in range(24)]
SIDE_INPUT_ROWS = 10_000  # nexmark's side_input_gen.sh: --num 10000
BASE_TIME_MS = 1_767_225_600_000  # 2026-01-01 00:00:00 UTC: the first event's time, fixed so runs agree
# Queries whose result depends on the wall clock (processing-time windows): not compared.
NONDETERMINISTIC = {"q12": "processing-time window (PROCTIME())"}
# Queries whose changelog Flink's collect() gives in upsert form (UPDATE_AFTER without UPDATE_BEFORE):
# q9's Top-1 per auction, whose output has no rank number, updates the row of its auction id
# (column 0). Their results are materialized by that key on both engines.
UPSERT_KEYS = {"q9": (0,)}


def split_statements(text: str) -> list[str]:
    """The statements of a SQL script: ``--`` comments dropped, split at ``;`` outside quotes."""
    out, current, quote, i = [], [], None, 0
    while i < len(text):
        ch = text[i]
        if quote:
            current.append(ch)
            if ch == quote:
                quote = None
        elif ch == "-" and text.startswith("--", i):
            end = text.find("\n", i)
            i = len(text) if end < 0 else end
            continue
        elif ch in ("'", "`", '"'):
            quote = ch
            current.append(ch)
        elif ch == ";":
            out.append("".join(current).strip())
            current = []
        else:
            current.append(ch)
        i += 1
    out.append("".join(current).strip())
    return [s for s in out if s]


_WITH = re.compile(r"\)\s*WITH\s*\((?P<options>.*)\)\s*;?\s*$", re.S | re.I)


def _replace_options(ddl: str, options: dict[str, str]) -> str:
    match = _WITH.search(ddl)
    if match is None:
        raise ValueError(f"no WITH clause in: {ddl[:80]}...")
    body = ", ".join(f"'{k}' = '{v}'" for k, v in options.items())
    return ddl[:match.start()] + f") WITH ({body})"


def rewrite_datagen(ddl: str, events_path: str) -> str:
    """nexmark's ``datagen`` DDL over the event file instead of the generator (schema and watermark kept)."""
    return _replace_options(ddl, {"connector": "filesystem", "path": events_path, "format": "json"})


def statements(query_dir: str, query: str, events_path: str, side_input_path: str, out_dir: str) -> list[str]:
    """Every statement to run for ``query``: the datagen table, the views, then the query's own
    (its sink, views, side tables; the ``INSERT`` last), connector options rewritten."""
    def read(name: str) -> str:
        with open(os.path.join(query_dir, name), encoding="utf-8") as f:
            return f.read()

    out = [rewrite_datagen(s, events_path) for s in split_statements(read("ddl_gen.sql"))]
    out += [s.replace("${NEXMARK_TABLE}", "datagen") for s in split_statements(read("ddl_views.sql"))]
    for s in split_statements(read(f"{query}.sql")):
        if "${NEXMARK_DIR}" in s:  # q10's filesystem sink
            s = re.sub(r"'path'\s*=\s*'[^']*'", f"'path' = '{out_dir}'", s)
        if re.search(r"'connector\.type'\s*=\s*'filesystem'", s):  # q13's side input, legacy options
            s = _replace_options(s, {"connector": "filesystem", "path": side_input_path, "format": "csv"})
        out.append(s)
    return out


def writes_files(query_dir: str, query: str) -> bool:
    """Whether ``query``'s sink is a filesystem table (q10), whose files the benchmark compares."""
    with open(os.path.join(query_dir, f"{query}.sql"), encoding="utf-8") as f:
        return "${NEXMARK_DIR}" in f.read()


def select_of(insert: str) -> str:
    """The query of ``INSERT INTO t <query>`` (to collect its changelog instead of sinking it)."""
    match = re.match(r"\s*INSERT\s+INTO\s+\S+\s+(?P<q>.*)$", insert, re.S | re.I)
    if match is None:
        raise ValueError(f"not an INSERT INTO: {insert[:80]}")
    return match.group("q")


def write_side_input(path: str, rows: int = SIDE_INPUT_ROWS) -> None:
    """nexmark's ``side_input.txt``: ``i,i`` for ``i`` in ``[0, rows)``."""
    with open(path, "w", encoding="utf-8") as f:
        f.writelines(f"{i},{i}\n" for i in range(rows))


# --- results --------------------------------------------------------------------------------------

def normalize(value):
    """A result value in a form both engines' Python values compare equal in."""
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return None if math.isnan(value) else float(f"{value:.9g}")
    if isinstance(value, decimal.Decimal):
        return str(value.normalize()) if value != 0 else "0"
    if isinstance(value, (datetime.datetime, datetime.date, datetime.time)):
        return value.isoformat()
    if isinstance(value, dict):
        return tuple(sorted((normalize(k), normalize(v)) for k, v in value.items()))
    if isinstance(value, (list, tuple)):
        return tuple(normalize(v) for v in value)
    return str(value)


def materialize(changes, upsert_key: tuple[int, ...] | None = None) -> Counter:
    """The multiset a changelog of ``(kind, values)`` ends in (kind ``+I``/``+U`` adds, ``-U``/``-D`` removes).

    With ``upsert_key`` (column positions) a changelog in upsert form: ``+I``/``+U`` replace the row
    of their key, ``-U``/``-D`` remove it (a retract changelog of the same query ends the same).
    """
    if upsert_key is not None:
        latest: dict = {}
        for kind, values in changes:
            row = tuple(normalize(v) for v in values)
            key = tuple(row[i] for i in upsert_key)
            if kind in ("+I", "+U"):
                latest[key] = row
            else:
                latest.pop(key, None)
        return Counter(latest.values())
    rows: Counter = Counter()
    for kind, values in changes:
        key = tuple(normalize(v) for v in values)
        if kind in ("+I", "+U"):
            rows[key] += 1
        else:
            rows[key] -= 1
            if rows[key] == 0:
                del rows[key]
    return rows


def encode(rows: Counter) -> list:
    """A materialized result as JSON-able sorted ``[row, count]`` pairs."""
    return sorted(([list(k), n] for k, n in rows.items()), key=repr)


# --- CPU time ---------------------------------------------------------------------------------------

_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def _stat(pid: int) -> tuple[int, float] | None:
    """(parent pid, CPU seconds of the process and of its reaped children) from ``/proc/<pid>/stat``."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    # after the name: state ppid ... utime(14) stime(15) cutime(16) cstime(17), numbered from 1 in proc(5)
    return int(fields[1]), sum(int(x) for x in fields[11:15]) / _TICKS


def tree_cpu_seconds(root: int | None = None) -> float:
    """CPU seconds (user + system) of ``root`` (default: this process) and all its descendants,
    children that already ended and were waited for included (their ``cutime``/``cstime``):
    for changeflow the driver, its JVM and Python workers; for PyFlink the Python client and
    its JVM."""
    return sum(cpu for _, cpu in _tree(os.getpid() if root is None else root).values())


def _tree(root: int) -> dict[int, tuple[int, float]]:
    """``{pid: (parent pid, CPU seconds incl. reaped children)}`` of ``root`` and its descendants now."""
    stats = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            stat = _stat(int(name))
            if stat is not None:
                stats[int(name)] = stat
    children: dict[int, list[int]] = {}
    for pid, (ppid, _) in stats.items():
        children.setdefault(ppid, []).append(pid)
    out, todo = {}, [root]
    while todo:
        pid = todo.pop()
        if pid in stats:
            out[pid] = stats[pid]
        todo.extend(children.get(pid, ()))
    return out


class TreeCpu:
    """The CPU seconds of a process tree over a span, counting processes that end within it.

    :func:`tree_cpu_seconds` before and after misses a process that ends in between unless its
    parent waits for it (then the parent's ``cutime`` has it): Spark's Python daemon ignores
    ``SIGCHLD``, so its workers' CPU vanished with them (a query could even come out with
    negative worker CPU, a worker's earlier CPU leaving the tree). Here the tree is sampled every
    ``interval`` seconds from a thread: a process that ends counts with its last sample (at most
    ``interval`` of its CPU is missed), unless its parent, still alive, reaped it (the parent's
    ``cutime`` grew by at least what the process had): then the parent's growth has it, and the
    process's CPU from before the span is taken off. The sampling thread's own CPU is not counted.
    """

    def __init__(self, root: int | None = None, interval: float = 0.25) -> None:
        self.root = os.getpid() if root is None else root
        self.interval = interval
        self._base: dict[int, tuple[int, float]] = {}
        self._last: dict[int, tuple[int, float]] = {}
        self._own = 0.0
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _sample(self) -> None:
        self._last.update(_tree(self.root))

    def _run(self) -> None:
        start = time.thread_time()
        while not self._done.wait(self.interval):
            self._sample()
        self._own = time.thread_time() - start

    def __enter__(self) -> "TreeCpu":
        self._base = _tree(self.root)
        self._last = dict(self._base)
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._done.set()
        self._thread.join()

    def seconds(self) -> float:
        """The span's CPU seconds (after the ``with`` block)."""
        end = _tree(self.root)
        grown = {pid: cpu - self._base.get(pid, (0, 0.0))[1] for pid, (_, cpu) in end.items()}
        total = sum(grown.values())
        ended: dict[int, list[int]] = {}
        for pid, (ppid, _) in self._last.items():
            if pid not in end:
                ended.setdefault(ppid, []).append(pid)
        for ppid, pids in ended.items():
            had = sum(self._last[p][1] for p in pids)
            reaped = ppid in end and grown[ppid] >= had - 0.02 * len(pids)   # clock ticks round
            for pid in pids:
                before = self._base.get(pid, (0, 0.0))[1]
                total += -before if reaped else self._last[pid][1] - before
        return total - self._own


def error_line(e: BaseException) -> str:
    """An error's first telling line: the first ``...Exception: ...`` line of a Java error (Py4J
    puts "An error occurred while calling ..." first), else the first line."""
    lines = [x.strip().lstrip(": ") for x in str(e).splitlines() if x.strip()]
    for line in lines:
        if re.match(r"^[\w.$]+(Exception|Error): ", line):
            return line[:400]
    return f"{type(e).__name__}: {lines[0][:400] if lines else ''}"


def load_average() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


# --- events -----------------------------------------------------------------------------------------

def write_events(path: str, events: int, chunk: int = 50_000) -> None:
    """``events`` Nexmark events from changeflow's generator (nexmark's default proportions, a fixed
    base time) as JSON lines with the ``datagen`` table's columns (``event_type`` and the ROWs
    ``person``, ``auction``, ``bid``; the other kinds' ROWs null), timestamps as Flink's JSON
    format reads them by default (``yyyy-MM-dd HH:mm:ss.SSS``). In event-time order: one file,
    so that each engine reads it in order and the watermark sees no late event."""
    import json

    import pyarrow as pa

    from changeflow.connectors.nexmark import NexmarkSource
    from changeflow.sql.ddl import parse_create_table

    columns = ", ".join(
        [f"{kind} ROW<" + ", ".join(f"`{f}` {_SQL[role]}" for f, role in fields) + ">"
         for kind, fields in _nexmark_columns().items()])
    table, _ = parse_create_table(
        f"CREATE TABLE datagen (event_type INT, {columns}) WITH ('connector' = 'nexmark', "
        f"'events.num' = '{events}', 'base-time' = '{BASE_TIME_MS}')")
    source = NexmarkSource(table, streaming=False)
    names = [n for n, _ in source.fields]

    def text(v):
        return v.strftime("%Y-%m-%d %H:%M:%S.") + f"{v.microsecond // 1000:03d}" \
            if isinstance(v, datetime.datetime) else v

    with open(path, "w", encoding="utf-8") as f:
        for start in range(0, events, chunk):
            count = min(chunk, events - start)
            batch = pa.Table.from_arrays(source.arrow_columns(start, count), names=names).to_pylist()
            for record in batch:
                for kind in ("person", "auction", "bid"):
                    row = record[kind]
                    if row is not None:
                        record[kind] = {k: text(v) for k, v in row.items()}
                f.write(json.dumps(record, separators=(",", ":")))
                f.write("\n")


_SQL = {"int": "BIGINT", "str": "STRING", "ts": "TIMESTAMP(3)"}


def _nexmark_columns() -> dict:
    from changeflow.connectors.nexmark import NEXMARK_COLUMNS

    return NEXMARK_COLUMNS
