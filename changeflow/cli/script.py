"""A SQL script cut into statements at the semicolons that end them, as Flink's SQL client reads one.

A semicolon ends a statement only outside strings, quoted identifiers and
comments, so the cut follows the tokens of Flink's SQL dialect
(:func:`changeflow.sql.ddl.tokenize`), not the characters. Each statement keeps
its place in the script: the text before it is blanked with its newlines kept,
so a planner error's "at line L, column C" points into the script the user wrote.

>>> [s.text.strip() for s in statements("SET 'a' = 'b;c';\\n-- a comment; still one\\nSELECT 1;")]
["SET 'a' = 'b;c'", '-- a comment; still one\\nSELECT 1']
>>> statements("SELECT 1;\\nSELECT\\n  2")[1].line
2
>>> is_complete("SELECT ';'"), is_complete("SELECT ';';"), is_complete("SELECT 1 -- ;")
(False, True, False)
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from sqlglot import TokenType

from changeflow.sql.ddl import DdlError, tokenize


@dataclass(frozen=True)
class Statement:
    """One statement of a script: its text (positioned as in the script) and the line it starts on."""

    text: str
    line: int
    complete: bool  # ended by a semicolon (the last statement of a script may lack one)

    @property
    def source(self) -> str:
        """The statement as written, without the blanked text before it."""
        return self.text.strip()


def statements(script: str) -> list[Statement]:
    """The statements of ``script``, in order; empty ones (``;;``, comments alone) are left out."""
    ends = [t.end for t in tokenize(script) if t.token_type == TokenType.SEMICOLON]
    out, start = [], 0
    for end in [*ends, len(script)]:
        body = script[start:end]
        if _has_code(body):
            blank = re.sub(r"[^\n]", " ", script[:start])
            first = start + (len(body) - len(body.lstrip()))
            out.append(Statement(blank + body, script.count("\n", 0, first) + 1, end != len(script)))
        start = end + 1
    return out


def is_complete(text: str) -> bool:
    """Whether interactive input ends with a statement's closing semicolon (not one in a string or comment)."""
    try:
        tokens = tokenize(text)
    except DdlError:
        return False  # an open string or quoted name: the statement goes on on the next line
    return bool(tokens) and tokens[-1].token_type == TokenType.SEMICOLON


def _has_code(text: str) -> bool:
    try:
        return bool(tokenize(text))
    except DdlError:
        return bool(text.strip())  # let the statement's own parse report what is wrong

