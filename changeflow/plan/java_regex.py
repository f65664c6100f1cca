"""Java's regular-expression syntax, read as far as changeflow needs: where each capturing group ends.

Flink runs SQL's regular expressions with ``java.util.regex`` and so does Spark's JVM;
``REGEXP_EXTRACT`` needs a pattern's groups known at plan time
(:mod:`changeflow.runtime.spark.regexp_extract`). Escapes, ``\\Q...\\E`` quoting, nested
character classes, named groups ``(?<name>...)`` and the non-capturing constructs
(``(?:``, look-arounds, atomic groups, inline flags) are read; the COMMENTS flag
``(?x)``, whose whitespace and ``#`` comments change the syntax, is refused.
"""

from __future__ import annotations


def group_ends(pattern: str) -> list[int]:
    """The index of the ``)`` closing each capturing group of a Java ``pattern``, by group number - 1.

    >>> group_ends(r"(&|^)channel_id=([^&]*)")
    [4, 22]
    >>> group_ends(r"(?:a(b))\\((?<n>c)[(]\\Q(\\E")
    [6, 16]
    """
    ends: dict[int, int] = {}
    stack: list[int | None] = []   # the open groups: their number, None if not capturing
    count, i, n = 0, 0, len(pattern)
    while i < n:
        c = pattern[i]
        if c == "\\":
            if pattern.startswith("\\Q", i):   # quoted up to \E
                end = pattern.find("\\E", i + 2)
                i = n if end < 0 else end + 2
                continue
            i += 2
            continue
        if c == "[":
            i = _class_end(pattern, i)
            continue
        if c == "(":
            rest = pattern[i + 1:]
            capturing = not rest.startswith("?") or (rest.startswith("?<") and rest[2:3].isalpha())
            if rest.startswith("?") and "x" in rest[1:].split(")")[0].split(":")[0]:
                raise ValueError("the COMMENTS flag (?x)")
            if capturing:
                count += 1
            stack.append(count if capturing else None)
        elif c == ")":
            if not stack:
                raise ValueError(f"an unmatched ')' at index {i}")
            group = stack.pop()
            if group is not None:
                ends[group] = i
        i += 1
    if stack:
        raise ValueError("an unclosed group")
    return [ends[g] for g in range(1, count + 1)]


def _class_end(pattern: str, start: int) -> int:
    """The index after the ``]`` closing the character class opened at ``start`` (classes nest in Java)."""
    depth, i = 0, start
    while i < len(pattern):
        c = pattern[i]
        if c == "\\":
            i += 2
            continue
        if c == "[":
            depth += 1
        elif c == "]" and i > start + 1 + (pattern[start + 1:start + 2] == "^"):
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    raise ValueError("an unclosed character class")


__all__ = ["group_ends"]
