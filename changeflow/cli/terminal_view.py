"""A full-screen result view (:class:`~changeflow.cli.result_view.ResultView`) on the user's terminal.

As Flink's ``CliView`` does with JLine: the terminal switches to its alternate screen
(the shell's lines are back, untouched, when the view is left), echo and line
editing are off so each key acts at once, and Ctrl-C is a key (it quits the view)
rather than a signal. The query's changes are read on a thread of their own
(:class:`~changeflow.cli.result_store.ResultFeed`) while this loop refreshes the view
at its interval, draws it at most every 100 ms (Flink's pace) and reads keys. On a
terminal without cursor control (``TERM=dumb``) the screen is cleared with blank
lines and is 80 by 30, as Flink's plain terminal. Leaving the view ends the query.
"""

from __future__ import annotations

import os
import re
import select
import sys
import threading
import time
from collections.abc import Sequence
from typing import TextIO

from changeflow.cli.result_store import DEFAULT_MAX_TABLE_ROWS, ResultFeed
from changeflow.cli.result_view import ResultView, ansi
from changeflow.common.types import DataType
from changeflow.table.result import CloseableIterator

_SEQUENCES = {"A": "up", "B": "down", "C": "right", "D": "left", "F": "end", "4~": "end", "8~": "end",
              "15~": "f5"}
_ESCAPE = re.compile(r"\x1b(?:\[([0-9;]*[~A-Za-z])|O([A-Za-z]))")
_ESCAPE_WAIT = 0.2  # Flink's ambiguous-key timeout: an Esc alone quits, an arrow key's Esc is followed by more
_DISPLAY_EVERY = 0.1  # Flink draws at most every 100 ms, even at the "Fastest" refresh


def show_result(changes: CloseableIterator, schema: Sequence[tuple[str, DataType]], materialized: bool, *,
                max_rows: int = DEFAULT_MAX_TABLE_ROWS, inp: TextIO | None = None, out: TextIO | None = None) -> None:
    """Show a query's ``changes`` full-screen until the user quits; the query stops then.

    ``materialized`` is the ``TABLE`` result mode (the table the changes build),
    otherwise ``CHANGELOG`` (the latest changes with their ``op``). The query's
    failure is raised after the screen is restored.
    """
    keyboard: TextIO = inp if inp is not None else sys.stdin
    screen: TextIO = out if out is not None else sys.stdout
    check_terminal(materialized, keyboard, screen)
    feed = ResultFeed(materialized, max_rows)
    reader = threading.Thread(target=feed.consume, args=(changes,), name="changeflow-sql-result", daemon=True)
    reader.start()
    try:
        with _Terminal(keyboard, screen) as terminal:
            view = ResultView(schema, feed, materialized, plain_terminal=terminal.plain)
            _run(view, terminal)
    finally:
        feed.stop()
        changes.close()  # leaving the view cancels the query, as in Flink
        reader.join(timeout=10)


def check_terminal(materialized: bool, inp: TextIO | None = None, out: TextIO | None = None) -> None:
    """Refuse the full-screen modes when the client's input or output is not a terminal (a pipe, a file)."""
    inp = inp if inp is not None else sys.stdin
    out = out if out is not None else sys.stdout
    if not (_isatty(inp) and _isatty(out)):
        raise ValueError(f"The {'TABLE' if materialized else 'CHANGELOG'} result mode is a full-screen view and "
                         "needs a terminal. Please use 'SET sql-client.execution.result-mode=TABLEAU;' instead.")


def _isatty(stream) -> bool:
    return bool(getattr(stream, "isatty", lambda: False)())


def _run(view: ResultView, terminal: "_Terminal") -> None:
    next_refresh, last_display, dirty = 0.0, 0.0, True
    while not view.closed:
        now = time.monotonic()
        size = terminal.size()
        if size != (view.width, view.height):
            view.resize(*size)
            dirty = True
        interval = view.interval
        if interval is not None and now >= next_refresh:
            view.refresh()  # raises the query's failure: the view closes with it
            next_refresh, dirty = now + interval, True
        if dirty and now - last_display >= _DISPLAY_EVERY:
            terminal.draw(view.render())
            last_display, dirty = now, False
        wait = _DISPLAY_EVERY if interval is None else min(_DISPLAY_EVERY, max(0.02, next_refresh - now))
        keys = terminal.read_keys(wait)
        for key in keys:
            view.key(key)
            if view.closed:
                return
        if keys:  # a key's effect is drawn at once
            terminal.draw(view.render())
            last_display, dirty = time.monotonic(), False


def parse_keys(data: str) -> list[str]:
    """Key names in typed input: characters, ``escape``, ``ctrl-c`` and the arrows, End and F5 by name.

    >>> parse_keys("q\\x1b[A\\x1bOB\\x1b[15~\\x03\\x1b")
    ['q', 'up', 'down', 'f5', 'ctrl-c', 'escape']
    """
    keys, i = [], 0
    while i < len(data):
        found = _ESCAPE.match(data, i)
        if found is not None:
            code = found.group(1) or found.group(2)
            keys.append(_SEQUENCES.get(code, ""))
            i = found.end()
            continue
        ch = data[i]
        keys.append({"\x1b": "escape", "\x03": "ctrl-c", "\r": "enter", "\n": "enter"}.get(ch, ch))
        i += 1
    return [k for k in keys if k]


class _Terminal:
    """The terminal in full-screen, key-at-a-time mode while the view is open."""

    def __init__(self, inp: TextIO, out: TextIO) -> None:
        self.inp, self.out = inp, out
        self.fd = inp.fileno()
        caps = _capabilities(out)
        self.plain = "clear" not in caps
        self.caps = caps
        self._saved = None

    def __enter__(self) -> "_Terminal":
        import termios

        self._saved = termios.tcgetattr(self.fd)
        mode = termios.tcgetattr(self.fd)
        mode[0] &= ~(termios.IXON | termios.ICRNL | termios.INLCR)
        # no line editing, no echo, and Ctrl-C read as a key (Flink turns the interrupt character off)
        mode[3] &= ~(termios.ICANON | termios.ECHO | termios.IEXTEN | termios.ISIG)
        mode[6][termios.VMIN], mode[6][termios.VTIME] = 1, 0
        termios.tcsetattr(self.fd, termios.TCSADRAIN, mode)
        self._write(self.caps.get("smcup", "") + self.caps.get("civis", ""))
        return self

    def __exit__(self, *exc) -> None:
        import termios

        self._write(self.caps.get("rmcup", "") + self.caps.get("cnorm", ""))
        if self._saved is not None:
            termios.tcsetattr(self.fd, termios.TCSADRAIN, self._saved)

    def size(self) -> tuple[int, int]:
        try:
            columns, lines = os.get_terminal_size(self.out.fileno())
        except OSError:
            columns = lines = 0
        return (columns, lines) if columns and lines else (80, 30)  # Flink's plain terminal

    def draw(self, lines) -> None:
        clear = self.caps["clear"] if not self.plain else "\n" * 200
        self._write(clear + "\n".join(ansi(line) for line in lines))

    def read_keys(self, timeout: float) -> list[str]:
        data = self._read(timeout)
        if data.endswith("\x1b"):  # an Esc alone quits; an arrow's Esc has the rest of its sequence close behind
            data += self._read(_ESCAPE_WAIT)
        return parse_keys(data)

    def _read(self, timeout: float) -> str:
        ready, _, _ = select.select([self.fd], [], [], timeout)
        if not ready:
            return ""
        return os.read(self.fd, 1024).decode("utf-8", "replace")

    def _write(self, text: str) -> None:
        self.out.write(text)
        self.out.flush()


def _capabilities(out: TextIO) -> dict[str, str]:
    """The terminal's control sequences from terminfo (alternate screen, clear, cursor); none on a dumb one."""
    try:
        import curses

        curses.setupterm(os.environ.get("TERM"), out.fileno())
    except Exception:  # no curses on this platform, or a terminal terminfo does not know: a plain terminal
        return {}
    caps = {}
    for name in ("smcup", "rmcup", "clear", "civis", "cnorm"):
        value = curses.tigetstr(name)
        if value:
            caps[name] = value.decode("latin-1")
    return caps
