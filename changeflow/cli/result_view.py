"""Flink's full-screen result views (``TABLE`` and ``CHANGELOG`` result modes) without a terminal.

:class:`ResultView` is the state of Flink 2.3's ``CliTableResultView`` /
``CliChangelogResultView``: the rows on show, the page, the selected row, the
scroll offsets and the refresh interval; :meth:`ResultView.key` applies a key's
operation and :meth:`ResultView.render` gives the screen's lines as Flink's
``CliView`` lays them out: a title, a status line (refresh interval or ``Table
program finished.``, the page, the time of the last refresh), the column names,
the rows, and two lines of keys. A line is a list of styled segments, so tests
read the screen as text (:func:`text`) and the terminal gets it with ANSI styles
(:func:`ansi`). :mod:`changeflow.cli.terminal_view` drives it on a terminal.
"""

from __future__ import annotations

import datetime
import math
from collections.abc import Callable, Sequence

from changeflow.cli.result_store import ResultFeed
from changeflow.common.types import DataType
from changeflow.table.result import column_width, format_value

#: Flink's refresh intervals (label, seconds; None: no automatic refresh). Flink 2.3 waits 100 ms for its
#: "500 ms", a slip in its table of intervals; here "500 ms" is 500 ms.
REFRESH_INTERVALS: tuple[tuple[str, float | None], ...] = (
    ("Fastest", 0.0), ("100 ms", 0.1), ("500 ms", 0.5), ("1 s", 1.0), ("5 s", 5.0), ("10 s", 10.0),
    ("1 min", 60.0), ("-", None))
CHANGELOG_MAX_ROWS = 1000  # Flink keeps the latest 1000 changes on a changelog view
LAST_PAGE = 0
NO_ROW = -1
MARGIN = " "

Line = list[tuple[str, str]]  # segments (style, text); style: "" plain, "i" inverse, "b" bold, "u" underline
_ANSI = {"": "\x1b[0m", "i": "\x1b[0;7m", "b": "\x1b[0;1m", "u": "\x1b[0;4m"}

#: Keys (as :mod:`changeflow.cli.terminal_view` names them) and the operation each is bound to, as in Flink.
KEYS = {
    "q": "quit", "Q": "quit", "escape": "quit", "ctrl-c": "quit",
    "r": "refresh", "R": "refresh", "f5": "refresh",
    "w": "up", "W": "up", "up": "up", "s": "down", "S": "down", "down": "down",
    "a": "left", "A": "left", "left": "left", "d": "right", "D": "right", "right": "right",
    "n": "next", "N": "next", "p": "prev", "P": "prev", "l": "last", "L": "last", "end": "last",
    "+": "inc_refresh", "-": "dec_refresh",
}
_TABLE_ONLY = ("next", "prev", "last")


class ResultView:
    """The state of a full-screen result view: ``materialized`` is ``TABLE`` mode, else ``CHANGELOG``."""

    def __init__(self, schema: Sequence[tuple[str, DataType]], feed: ResultFeed, materialized: bool, *,
                 plain_terminal: bool = False, clock: Callable[[], datetime.datetime] = datetime.datetime.now) -> None:
        self.materialized = materialized
        self.names = [n for n, _ in schema]
        self.types = [t for _, t in schema]
        widths = [column_width(n, t) for n, t in schema]
        self.widths = widths if materialized else [2] + widths  # the changelog's "op" column
        self.feed = feed
        self.clock = clock
        # Flink: a table refreshes every second, a changelog as fast as it can (every second on a plain terminal)
        self.refresh_interval = 3 if materialized or plain_terminal else 0
        self.min_refresh_interval = 1 if materialized else 0
        self.retrieving = True
        self.results: list[list[str]] = []
        self.previous: list[list[str]] | None = [] if materialized else None
        self.previous_page = 1
        self.page = LAST_PAGE
        self.page_count = 1
        self.snapshot: list[tuple] = []
        self.last_refresh: datetime.datetime | None = None
        self.selected = NO_ROW
        self.offset_x = self.offset_y = 0
        self.scrolling = 0
        self.width, self.height = 80, 30
        self.closed = False

    # --- the result -------------------------------------------------------------------------
    @property
    def interval(self) -> float | None:
        """Seconds between automatic refreshes (None: none); nothing is refreshed once the result ended."""
        return REFRESH_INTERVALS[self.refresh_interval][1] if self.retrieving else None

    def refresh(self) -> None:
        """Read the feed: a new snapshot of the table, or the changes since the last refresh."""
        if self.materialized:
            rows = self.feed.snapshot()
            if rows is None:
                self.retrieving = False
            else:
                self.snapshot = rows
                self.page_count = max(1, math.ceil(len(rows) / self.page_size))
                if self.page > self.page_count:
                    self.page = LAST_PAGE
                self._update_page()
        else:
            changes = self.feed.drain()
            if changes is None:
                self.retrieving = False
            else:
                for change in changes:
                    if len(self.results) >= CHANGELOG_MAX_ROWS:
                        del self.results[0]
                    self.results.append([str(change.kind)] + self._cells(change.values))
                    self.scrolling += 1
        self.last_refresh = self.clock()

    def _cells(self, values: tuple) -> list[str]:
        return [format_value(v, t) for v, t in zip(values, self.types, strict=True)]

    @property
    def page_size(self) -> int:
        return max(1, self.visible_height)

    def _update_page(self) -> None:
        page = self.page_count if self.page == LAST_PAGE else self.page
        rows = self.snapshot[self.page_size * (page - 1): self.page_size * page]
        if self.previous_page == page:  # highlight changes only while the page stays the same
            self.previous = self.results
        else:
            self.previous, self.previous_page = None, page
        self.results = [self._cells(row) for row in rows]
        if self.selected >= len(self.results):
            self.selected = NO_ROW

    # --- keys ---------------------------------------------------------------------------------
    def key(self, name: str) -> None:
        """Apply the operation bound to the key ``name`` (unbound keys do nothing)."""
        operation = KEYS.get(name)
        if operation is None or (operation in _TABLE_ONLY and not self.materialized):
            return
        getattr(self, "_" + operation)()

    def _quit(self) -> None:
        self.closed = True

    def _refresh(self) -> None:
        if self.retrieving:
            self.refresh()

    def _inc_refresh(self) -> None:
        self.refresh_interval = min(len(REFRESH_INTERVALS) - 1, self.refresh_interval + 1)

    def _dec_refresh(self) -> None:
        self.refresh_interval = max(self.min_refresh_interval, self.refresh_interval - 1)

    def _up(self) -> None:
        if self.selected == NO_ROW:
            if self.results:
                self.selected = min(len(self.results), self.offset_y + self.visible_height) - 1
        elif self.selected > self.offset_y:
            self.selected -= 1
        else:
            self.selected = max(0, self.selected - 1)
            self.offset_y = max(0, self.offset_y - 1)

    def _down(self) -> None:
        bottom = min(len(self.results), self.offset_y + self.visible_height) - 1
        if self.selected == NO_ROW:
            self.selected = self.offset_y
        elif bottom >= 0 and self.selected < bottom:
            self.selected += 1
        else:
            self.selected = min(max(0, len(self.results) - 1), self.selected + 1)
            self._scroll_down(1)

    def _left(self) -> None:
        self.offset_x = max(0, self.offset_x - 1)

    def _right(self) -> None:
        self.offset_x = min(max(0, self._main_width() - self.width), self.offset_x + 1)

    def _next(self) -> None:
        page = self.page_count if self.page == LAST_PAGE else self.page
        if page < self.page_count:
            self.page = page + 1
        self._update_page()

    def _prev(self) -> None:
        page = self.page_count if self.page == LAST_PAGE else self.page
        if page > 1:
            self.page = page - 1
        self._update_page()

    def _last(self) -> None:
        self.page = LAST_PAGE
        self._update_page()

    def _scroll_down(self, n: int) -> None:
        self.offset_y = min(max(0, len(self.results) - self.visible_height), self.offset_y + n)

    # --- the screen -------------------------------------------------------------------------
    @property
    def visible_height(self) -> int:
        """Rows of results on the screen: all but the title, status, blank, column-name and 2 key lines."""
        return self.height - 6

    def resize(self, width: int, height: int) -> None:
        self.width, self.height = width, height

    def render(self) -> list[Line]:
        """The screen's lines, top to bottom, as Flink's ``CliView.display`` lays them out."""
        if not self.materialized and self.scrolling > 0:  # a changelog follows its newest change
            self.selected = NO_ROW
            self._scroll_down(self.scrolling)
            self.scrolling = 0
        main = self._main_lines()
        visible = self.visible_height
        self.offset_y = 0 if visible > len(main) else min(len(main) - visible, self.offset_y)
        total = self._main_width(main)
        self.offset_x = 0 if self.width > total else min(total - self.width, self.offset_x)
        window = main[self.offset_y: self.offset_y + max(0, visible)]
        body = [_slice(line, self.offset_x, self.offset_x + self.width) for line in [self._column_names(), *window]]
        padding = max(0, self.height - 5 - len(body))  # title, status, blank; 2 key lines
        return [self._title(), self._status(), [], *body, *([[]] * padding), *self._help()]

    def _title(self) -> Line:
        title = f"SQL Query Result ({'Table' if self.materialized else 'Changelog'})"
        margin = (self.width - len(title)) // 2
        return [("i", " " * margin + title + " " * (margin + (self.width - len(title)) % 2))]

    def _status(self) -> Line:
        if self.retrieving:
            left = f"{MARGIN}Refresh: {REFRESH_INTERVALS[self.refresh_interval][0]}"
        else:
            left = f"{MARGIN}Table program finished."
        updated = "Unknown" if self.last_refresh is None else self.last_refresh.strftime("%H:%M:%S.%f")[:-3]
        right = f"Updated: {updated}{MARGIN}"
        if not self.materialized:
            return [("i", left + " " * (self.width - len(left) - len(right)) + right)]
        middle = f"Page: {'Last' if self.page == LAST_PAGE else self.page} of {self.page_count}"
        line = left + " " * (_div(self.width - len(middle), 2) - len(left)) + middle
        return [("i", line + " " * (self.width - len(line) - len(right)) + right)]

    def _column_names(self) -> Line:
        names = self.names if self.materialized else ["op", *self.names]
        line: Line = []
        for name, width in zip(names, self.widths, strict=True):
            line += [("", " "), ("u", _fit(name, width))]
        return line

    def _main_lines(self) -> list[Line]:
        lines = []
        for i, row in enumerate(self.results):
            line: Line = []
            for c, (cell, width) in enumerate(zip(row, self.widths, strict=True)):
                if i == self.selected:
                    style = "i"
                else:
                    changed = (self.previous is not None and self.retrieving
                               and (i >= len(self.previous) or cell != self.previous[i][c]))
                    style = "b" if changed else ""
                line += [("i" if i == self.selected else "", " "), (style, _fit(cell, width))]
            lines.append(line)
        return lines

    def _main_width(self, main: list[Line] | None = None) -> int:
        lines = [self._column_names(), *(main if main is not None else self._main_lines())]
        return max(sum(len(t) for _, t in line) for line in lines)

    def _help(self) -> list[Line]:
        options = [("Q", "Quit"), ("R", "Refresh"), ("+", "Inc Refresh"), ("-", "Dec Refresh")]
        if self.materialized:
            options += [("L", "Last Page"), ("N", "Next Page"), ("P", "Prev Page")]
        columns = math.ceil(len(options) / 2)
        space = _div(self.width - len(MARGIN) - columns * 13, columns)
        lines: list[Line] = [[], []]
        for i, (key, name) in enumerate(options):
            lines[i % 2] += [("i", key), ("", " " + name + " " * max(0, 11 - len(name) + space))]
        return lines


def _div(a: int, b: int) -> int:
    """Java's integer division (towards zero), as Flink's layout computes."""
    return int(a / b)


def _fit(text: str, width: int) -> str:
    """A cell right-aligned to its column's width, cut with ``~`` when longer (Flink's normalizeColumn)."""
    text = text.replace("\n", " ")
    return text[: width - 1] + "~" if len(text) > width else text.rjust(width)


def _slice(line: Line, start: int, end: int) -> Line:
    """The characters ``start`` to ``end`` of a styled line (the horizontally scrolled window)."""
    out: Line = []
    at = 0
    for style, segment in line:
        lo, hi = max(start, at), min(end, at + len(segment))
        if lo < hi:
            out.append((style, segment[lo - at: hi - at]))
        at += len(segment)
    return out


def text(line: Line) -> str:
    """A screen line as plain text."""
    return "".join(t for _, t in line)


def ansi(line: Line) -> str:
    """A screen line with its styles as ANSI escape sequences."""
    out, current = [], ""
    for style, segment in line:
        if style != current:
            out.append(_ANSI[style])
            current = style
        out.append(segment)
    if current:
        out.append(_ANSI[""])
    return "".join(out)
