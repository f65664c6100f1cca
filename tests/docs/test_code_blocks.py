"""Every ```python block of the documentation runs, as a reader would run it.

The pages are those of mkdocs.yml's nav (the guides, getting started, the design and operations
pages). A page's blocks run in order in one namespace, like a script a reader builds by copying
the page from the top: a later block may use what an earlier one defined. The Spark-using blocks
run on the test process's shared SparkSession (an environment created without ``spark_session``
takes the active one), so a page costs its queries, not a JVM start.

A block that cannot run as written says why, visibly, in the markdown source: an HTML comment
``<!-- not run: REASON -->`` on the line before its opening fence (a Kafka broker, a cluster, a
path on the reader's machine, a fragment of a program the page describes). The tests below check
that every such comment gives a reason and stands before a block, and that a block not marked runs
without an error. A block that does not run is a documentation bug: fix the page (or the code).
"""

from __future__ import annotations

import contextlib
import io
import pathlib
import re
import textwrap
from dataclasses import dataclass

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"

FENCE = re.compile(r"^(?P<indent>[ \t]*)```(?P<lang>[\w+-]*)\s*$")
NOT_RUN = re.compile(r"^\s*<!--\s*not run:(?P<reason>.*?)-->\s*$")
MARKER = re.compile(r"^\s*<!--\s*not run\b")  # a line opening with the marker: a malformed one is caught


@dataclass(frozen=True)
class Block:
    page: str
    line: int  # of the opening fence, 1-based
    code: str
    not_run: str | None  # the reason given, or None when the block runs


def nav_pages() -> list[str]:
    """The pages of mkdocs.yml's nav, in nav order (``- Title: page.md`` lines)."""
    text = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    nav = text[text.index("\nnav:"):]
    return re.findall(r"^\s*-\s+[^:\n]+:\s+(\S+\.md)\s*$", nav, flags=re.MULTILINE)


def python_blocks(page: str) -> list[Block]:
    """The ```python blocks of ``page`` (indented ones inside lists too), each with its not-run reason."""
    return parse_blocks(page, (DOCS / page).read_text(encoding="utf-8"))


def parse_blocks(page: str, text: str) -> list[Block]:
    lines = text.splitlines()
    blocks: list[Block] = []
    i = 0
    while i < len(lines):
        fence = FENCE.match(lines[i])
        if fence is None:
            i += 1
            continue
        start, indent = i, fence["indent"]
        i += 1
        while i < len(lines) and lines[i].strip() != "```":
            i += 1
        if fence["lang"] == "python":
            code = textwrap.dedent("\n".join(line[len(indent):] if line.startswith(indent) else line
                                             for line in lines[start + 1:i]))
            before = _previous_text_line(lines, start)
            marker = NOT_RUN.match(before) if before is not None else None
            blocks.append(Block(page, start + 1, code, marker["reason"].strip() if marker else None))
        i += 1  # past the closing fence
    return blocks


def _previous_text_line(lines: list[str], index: int) -> str | None:
    for line in reversed(lines[:index]):
        if line.strip():
            return line
    return None


PAGES = nav_pages()
RUN_PAGES = [p for p in PAGES if any(b.not_run is None for b in python_blocks(p))]


def test_blocks_are_found_with_their_markers():
    text = textwrap.dedent("""\
        Text.

        <!-- not run: needs a Kafka broker -->
        ```python
        produce()
        ```

        ```sql
        SELECT 1
        ```

        - an item:

          ```python
          if True:
              x = 1
          ```
        """)
    blocks = parse_blocks("page.md", text)
    assert [(b.line, b.code, b.not_run) for b in blocks] == [
        (4, "produce()", "needs a Kafka broker"), (14, "if True:\n    x = 1", None)]


def test_the_nav_lists_the_pages():
    assert "getting-started.md" in PAGES and "sql.md" in PAGES and "datastream.md" in PAGES
    assert all((DOCS / p).is_file() for p in PAGES)


@pytest.mark.parametrize("page", PAGES)
def test_every_not_run_marker_gives_a_reason_and_precedes_a_python_block(page):
    lines = (DOCS / page).read_text(encoding="utf-8").splitlines()
    marked = {b.line for b in python_blocks(page) if b.not_run is not None}
    for b in python_blocks(page):
        if b.not_run is not None:
            assert len(b.not_run) >= 10, f"{page}:{b.line}: a not-run block must say why it is not run"
    for number, line in enumerate(lines, start=1):
        if MARKER.search(line) is None:
            continue
        assert NOT_RUN.match(line), f"{page}:{number}: write the marker as '<!-- not run: REASON -->' on its own line"
        following = next((n for n in range(number + 1, len(lines) + 1) if lines[n - 1].strip()), None)
        assert following in marked, f"{page}:{number}: a not-run marker must stand just before a ```python block"


@pytest.mark.parametrize("page", RUN_PAGES)
def test_the_page_runs(page, spark):
    """The page's blocks not marked 'not run', in order, in one namespace; what they print is kept."""
    namespace: dict = {"__name__": "__main__"}  # as a script: its functions are pickled by value
    printed = io.StringIO()
    for block in python_blocks(page):
        if block.not_run is not None:
            continue
        code = compile(block.code, f"docs/{page}, block at line {block.line}", "exec")
        with contextlib.redirect_stdout(printed):
            exec(code, namespace)  # noqa: S102 - the documentation's own code
    assert printed.getvalue() or page not in PRINTING, f"docs/{page} printed nothing"


# Pages whose blocks print a result: an empty output would mean the program ran no query.
PRINTING = {"index.md", "datastream.md", "table-datastream.md"}
