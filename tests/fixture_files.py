"""Fixture files of titled ``SQL; expected;`` pairs, shared by the EXPLAIN fixtures (tests/sql) and
the planner-rule fixtures (tests/plan), and the catalog their queries plan against.

An entry is a ``# title:`` line, optional settings lines (``# key: value``), the
query ending with ``;`` and the expected text ending with ``;``; entries are
separated by a blank line.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from pathlib import Path

from changeflow.common.types import DataTypes as T
from changeflow.expressions import Column
from changeflow.plan.nodes import Source
from changeflow.plan.event_time import assign_watermark
from changeflow.plan.type_inference import PlanError
from changeflow.sql import plan_query


@dataclass
class Case:
    file: Path
    title: str
    settings: dict[str, str]
    sql: str
    expected: str


def read_cases(path: Path) -> list[Case]:
    cases = []
    for block in re.split(r"\n\s*\n(?=# title:)", path.read_text().strip()):
        lines = block.strip().splitlines()
        title = lines[0].removeprefix("# title:").strip()
        settings: dict[str, str] = {}
        body: list[str] = []
        for line in lines[1:]:
            if line.startswith("# ") and not body:
                key, _, value = line[2:].partition(":")
                settings[key.strip()] = value.strip()
            else:
                body.append(line)
        end = next(i for i, line in enumerate(body) if line.rstrip().endswith(";"))
        sql = "\n".join(body[:end + 1]).rstrip()[:-1]
        expected = "\n".join(body[end + 1:]).rstrip()
        expected = expected[:-1].rstrip() if expected.endswith(";") else expected
        cases.append(Case(path, title, settings, sql, expected))
    return cases


def catalog():
    """Deterministically named sources: t, u, src (the mini-batch seed's table), tp/up (with PROCTIME()),
    bids and asks (``ts`` a rowtime attribute: ``WATERMARK FOR ts AS ts - INTERVAL '2' SECOND``), rates
    (a versioned table: PRIMARY KEY k, ``WATERMARK FOR rts AS rts``) and rates_nokey (no key)."""
    tables = {
        "t": Source("t", (("id", T.BIGINT()), ("name", T.STRING()), ("v", T.INT()), ("d", T.DOUBLE())),
                    "elements", []),
        "u": Source("u", (("id", T.BIGINT()), ("region", T.STRING()), ("w", T.BIGINT())), "elements", []),
        "src": Source("src", (("user_id", T.INT()), ("day", T.STRING())), "elements", []),
    }

    def resolve(name):
        if name not in tables:
            raise PlanError(f"table {name!r} not found; known tables: {', '.join(sorted(tables))}")
        return tables[name]

    tables["tp"] = plan_query("SELECT *, PROCTIME() AS pt FROM t", resolve)
    tables["up"] = plan_query("SELECT *, PROCTIME() AS pt FROM u", resolve)
    bids = Source("bids", (("ts", T.TIMESTAMP(3)), ("k", T.STRING()), ("v", T.INT())), "elements", [])
    watermark = plan_query("SELECT ts - INTERVAL '2' SECOND FROM bids", lambda _: bids)
    tables["bids"] = assign_watermark(bids, "ts", watermark.exprs[0][1], "`ts` - INTERVAL '2' SECOND")
    asks = Source("asks", (("ts", T.TIMESTAMP(3)), ("k", T.STRING()), ("w", T.INT())), "elements", [])
    tables["asks"] = assign_watermark(asks, "ts", watermark.exprs[0][1], "`ts` - INTERVAL '2' SECOND")
    rates = Source("rates", (("k", T.STRING(False)), ("rate", T.INT()), ("rts", T.TIMESTAMP(3))), "elements", [],
                   primary_key=("k",))
    tables["rates"] = assign_watermark(rates, "rts", Column("rts"), "`rts`")
    tables["rates_nokey"] = assign_watermark(replace(rates, primary_key=()), "rts", Column("rts"), "`rts`")
    # Connector sources that declare a changelog (plan/rules/changelog_mode.py source_mode): ups an
    # upsert-kafka-like upsert source keyed by k, cdc a CDC format's full changelog keyed by k.
    keyed = (("k", T.STRING(False)), ("v", T.INT()))
    tables["ups"] = Source("ups", keyed, "connector", _Declared("upsert"), primary_key=("k",))
    tables["ups_nokey"] = Source("ups_nokey", keyed, "connector", _Declared("upsert"))
    tables["cdc"] = Source("cdc", keyed, "connector", _Declared("all"), primary_key=("k",))
    return resolve


class _Declared:
    """A connector payload that only declares its changelog mode (for planning, never run)."""

    bounded = False

    def __init__(self, changelog_mode: str) -> None:
        self.changelog_mode = changelog_mode
