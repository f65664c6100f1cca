"""The SQL client's full-screen result views (TABLE, CHANGELOG) without a terminal: materialization and screens."""

from __future__ import annotations

import datetime
import io
import os
import sys

import pytest

from hypothesis import given
from hypothesis import strategies as st

from changeflow.cli.client import SqlClient
from changeflow.cli.result_store import MaterializedRows, ResultFeed
from changeflow.cli.result_view import ResultView, ansi, text
from changeflow.cli.terminal_view import parse_keys
from changeflow.common.change import Change
from changeflow.common.row import Row
from changeflow.common.row_kind import RowKind
from changeflow.common.types import DataTypes
from changeflow.table import EnvironmentSettings, TableEnvironment
from changeflow.testing.changelog import materialize

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCHEMA = [("word", DataTypes.STRING()), ("cnt", DataTypes.BIGINT())]
NOON = datetime.datetime(2026, 1, 2, 12, 0, 0, 250000)


def change(kind: str, *values) -> Change:
    return Change(RowKind.from_short_string(kind), values)


# A GROUP BY word, COUNT(*) changelog: hello twice, world once, then hello retracted by a DELETE.
GROUP_BY = [change("+I", "hello", 1), change("+I", "world", 1), change("-U", "hello", 1), change("+U", "hello", 2),
            change("+I", "flink", 1), change("-D", "flink", 1)]


def view(materialized: bool, changes=GROUP_BY, *, finished=True, width=60, height=12, max_rows=1_000_000):
    feed = ResultFeed(materialized, max_rows)
    for c in changes:
        feed.add(c)
    if finished:
        feed.finish()
    v = ResultView(SCHEMA, feed, materialized, clock=lambda: NOON)
    v.resize(width, height)
    return v


def screen(v: ResultView) -> list[str]:
    return [text(line) for line in v.render()]


# --- materialization --------------------------------------------------------------------------


def test_a_retraction_removes_the_newest_equal_row_and_an_insert_appends():
    rows = MaterializedRows()
    for c in [change("+I", "a", 1), change("+I", "b", 1), change("+I", "a", 1), change("-U", "a", 1),
              change("+U", "a", 2), change("-D", "b", 1)]:
        rows.apply(c)
    assert rows.rows() == [("a", 1), ("a", 2)]  # the first ("a", 1) stays: the newest one was retracted


def test_a_retraction_of_a_row_not_held_is_ignored_and_past_max_rows_the_oldest_row_goes():
    rows = MaterializedRows(max_rows=2)
    for c in [change("+I", "a", 1), change("+I", "b", 1), change("+I", "c", 1), change("-D", "a", 1),
              change("-D", "b", 1)]:
        rows.apply(c)
    assert rows.rows() == [("c", 1)]


def test_rows_with_unhashable_values_materialize():
    rows = MaterializedRows()
    for c in [change("+I", [1, 2], {"k": 1}), change("+I", [3], {}), change("-D", [1, 2], {"k": 1})]:
        rows.apply(c)
    assert rows.rows() == [([3], {})]


def test_a_snapshot_never_falls_between_an_update_before_and_its_update_after():
    feed = ResultFeed(True)
    seen = []

    def changes():
        yield change("+I", "a", 1)
        yield change("-U", "a", 1)
        seen.append(feed.snapshot())  # the query's next change is not there yet
        yield change("+U", "a", 2)
        yield change("-U", "a", 2)  # the last change: applied when the changes end

    feed.consume(changes())
    assert seen == [[("a", 1)]]
    assert feed.snapshot() == []
    assert feed.snapshot() is None  # the end: the last snapshot was taken


def test_the_querys_failure_is_raised_by_the_views_next_read():
    feed = ResultFeed(False)

    def changes():
        yield change("+I", "a", 1)
        raise RuntimeError("the query failed")

    feed.consume(changes())
    with pytest.raises(RuntimeError, match="the query failed"):
        feed.drain()


@st.composite
def changelogs(draw):
    """A valid changelog over a few keys: each -U/-D retracts a row the table holds."""
    held: list[tuple] = []
    out = []
    for _ in range(draw(st.integers(0, 40))):
        if held and draw(st.booleans()):
            row = held.pop(draw(st.integers(0, len(held) - 1)))
            kind = draw(st.sampled_from(["-U", "-D"]))
            out.append(change(kind, *row))
            if kind == "-U":
                new = (row[0], draw(st.integers(0, 3)))
                held.append(new)
                out.append(change("+U", *new))
        else:
            row = (draw(st.sampled_from("abc")), draw(st.integers(0, 3)))
            held.append(row)
            out.append(change("+I", *row))
    return out


@given(changelogs())
def test_the_table_view_holds_what_the_changelog_builds(changes):
    rows = MaterializedRows()
    for c in changes:
        rows.apply(c)
    expected = materialize(Row.of(c.kind, c.values) for c in changes)
    assert sorted(rows.rows()) == sorted(tuple(r) for r in expected)


# --- the TABLE view -------------------------------------------------------------------------


def test_the_table_view_shows_the_materialized_rows_as_flinks_view_lays_them_out():
    v = view(True)
    v.refresh()
    lines = screen(v)
    assert len(lines) == 12
    assert lines[0] == " " * 18 + "SQL Query Result (Table)" + " " * 18
    assert lines[1] == " Refresh: 1 s" + " " * 9 + "Page: Last of 1 Updated: 12:00:00.250 "  # page centred
    assert lines[2] == ""
    assert lines[3] == "                           word                  cnt"
    # rows in the order they arrived: the update of hello appended its new row after world, as in Flink
    assert lines[4] == "                          world                    1"
    assert lines[5] == "                          hello                    2"
    assert lines[6:10] == [""] * 4
    assert lines[10].startswith("Q Quit") and "+ Inc Refresh" in lines[10] and "L Last Page" in lines[10]
    assert lines[11].startswith("R Refresh") and "- Dec Refresh" in lines[11] and "N Next Page" in lines[11]
    v.refresh()  # the result ended: its last snapshot was shown, the view says so
    assert screen(v)[1].startswith(" Table program finished.")


def test_the_table_view_highlights_changed_cells_while_the_query_runs():
    v = view(True, GROUP_BY[:2], finished=False)
    v.refresh()
    v.feed.add(change("-U", "hello", 1))
    v.feed.add(change("+U", "hello", 2))
    v.refresh()
    rows = v.render()[4:6]
    assert [text(r).split() for r in rows] == [["world", "1"], ["hello", "2"]]
    # world moved up a line and hello is new on the second line: both lines differ from the previous page
    assert "\x1b[0;1m" in ansi(rows[0]) and "\x1b[0;1m" in ansi(rows[1])
    v.refresh()
    assert "\x1b[0;1m" not in ansi(v.render()[4])  # unchanged since the last refresh


def test_pages_of_the_table_view():
    rows = [change("+I", f"w{i}", i) for i in range(14)]
    v = view(True, rows)  # 12 lines high: 6 rows a page
    v.refresh()
    assert "Page: Last of 3" in screen(v)[1]
    assert [line.split() for line in screen(v)[4:6]] == [["w12", "12"], ["w13", "13"]]
    v.key("p")
    assert "Page: 2 of 3" in screen(v)[1] and screen(v)[4].split() == ["w6", "6"]
    v.key("P")
    v.key("p")  # no page before the first
    assert "Page: 1 of 3" in screen(v)[1] and screen(v)[4].split() == ["w0", "0"]
    v.key("n")
    assert "Page: 2 of 3" in screen(v)[1]
    v.key("L")
    assert "Page: Last of 3" in screen(v)[1]


def test_keys_select_rows_scroll_sideways_change_the_refresh_interval_and_quit():
    v = view(True, width=30)
    v.refresh()
    v.key("down")
    assert v.render()[4][1][0] == "i"  # the first row is selected (inverse)
    v.key("s")
    v.key("w")
    assert v.selected == 0
    assert screen(v)[3] == " " * 27 + "wor"  # 30 columns of 52
    v.key("d")
    assert screen(v)[3] == " " * 26 + "word"
    v.key("a")
    assert screen(v)[3] == " " * 27 + "wor"
    v.key("+")
    assert "Refresh: 5 s" in screen(v)[1]
    for _ in range(5):
        v.key("-")
    assert "Refresh: 100 ms" in screen(v)[1]  # a table refreshes every 100 ms at the fastest
    assert not v.closed
    v.key("Q")
    assert v.closed


# --- the CHANGELOG view ---------------------------------------------------------------------


def test_the_changelog_view_shows_each_change_with_its_op_and_follows_the_newest():
    v = view(False, width=70)
    v.refresh()
    lines = screen(v)
    assert lines[0].strip() == "SQL Query Result (Changelog)"
    assert lines[1] == " Refresh: Fastest" + " " * 31 + "Updated: 12:00:00.250 "
    assert lines[3] == " op                           word                  cnt"
    assert [line.split() for line in lines[4:10]] == [
        ["+I", "hello", "1"], ["+I", "world", "1"], ["-U", "hello", "1"], ["+U", "hello", "2"],
        ["+I", "flink", "1"], ["-D", "flink", "1"]]
    assert "Next Page" not in lines[10] + lines[11]
    v.key("n")  # no pages in a changelog
    more = [change("+I", f"w{i}", i) for i in range(3)]
    for c in more:
        v.feed.add(c)
    v.refresh()
    assert [line.split() for line in screen(v)[4:10]] == [  # scrolled to the newest change
        ["+U", "hello", "2"], ["+I", "flink", "1"], ["-D", "flink", "1"], ["+I", "w0", "0"], ["+I", "w1", "1"],
        ["+I", "w2", "2"]]
    v.refresh()
    assert screen(v)[1].startswith(" Table program finished.")


def test_the_changelog_view_keeps_the_latest_1000_changes():
    v = view(False, [change("+I", f"w{i}", i) for i in range(1005)])
    v.refresh()
    assert len(v.results) == 1000 and v.results[0][1] == "w5"


# --- keys and the client ----------------------------------------------------------------------


def test_keys_are_read_by_name():
    assert parse_keys("Q\x1b[B\x1b[C\x1b[D\x1bOF\x1b[4~+-\x03") == ["Q", "down", "right", "left", "end", "end",
                                                                   "+", "-", "ctrl-c"]


def test_the_full_screen_modes_need_a_terminal_and_changelog_a_streaming_query():
    out = io.StringIO()
    t_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    client = SqlClient(t_env, out, interactive=True)
    assert not client.run("SELECT 1")  # TABLE, Flink's default: refused before anything runs (no Spark)
    assert "The TABLE result mode is a full-screen view and needs a terminal." in out.getvalue()
    client.run("SET 'sql-client.execution.result-mode' = 'changelog'")
    client.run("SET 'execution.runtime-mode' = 'batch'")
    assert not client.run("SELECT 1")
    assert "Results of batch queries can only be served in table or tableau mode." in out.getvalue()


# --- the view on a terminal (a pseudo-terminal; no Spark) ------------------------------------

_ON_A_TERMINAL = """
import termios
from changeflow.cli.terminal_view import show_result
from changeflow.common.change import Change
from changeflow.common.row_kind import RowKind
from changeflow.common.types import DataTypes
from changeflow.table.result import CloseableIterator

changes = [Change(RowKind.from_short_string(k), v) for k, v in
           [("+I", ("hello", 1)), ("+I", ("world", 1)), ("-U", ("hello", 1)), ("+U", ("hello", 2))]]
closed = []
show_result(CloseableIterator(changes, lambda: closed.append(True)),
            [("word", DataTypes.STRING()), ("cnt", DataTypes.BIGINT())], True)
print("query closed:", closed, "echo:", bool(termios.tcgetattr(0)[3] & termios.ECHO))
"""


def test_the_view_takes_the_terminal_full_screen_and_q_gives_it_back_as_it_was():
    pexpect = pytest.importorskip("pexpect")
    env = {**os.environ, "TERM": "xterm"}
    child = pexpect.spawn(sys.executable, ["-c", _ON_A_TERMINAL], cwd=ROOT, env=env, encoding="utf-8", timeout=60,
                          dimensions=(12, 60))
    try:
        child.expect_exact("\x1b[?1049h")  # the alternate screen
        child.expect_exact("SQL Query Result (Table)")
        child.expect_exact("Table program finished.")
        child.expect(r"\n +world +1\r?\n +hello +2\r?\n")
        child.send("+")  # keys act at once, without Enter: the finished view shows no interval to change
        child.send("\x1b[B")  # an arrow key is not an Esc: the view stays
        child.expect(r"\x1b\[0;7m +world")  # the first row selected (inverse)
        child.send("Q")
        child.expect_exact("\x1b[?1049l")  # the shell's screen back
        child.expect_exact("query closed: [True] echo: True")  # the query stopped, the terminal's echo restored
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)
    assert child.exitstatus == 0, child.before
