"""SQL/JSON path expressions as Flink 2.3 evaluates them: a ``lax``/``strict`` mode and a JSONPath.

Flink hands the path (after an optional ``lax `` or ``strict `` prefix; without one the mode is
strict) to the Jayway JsonPath library. This module parses the same path language and walks a
parsed JSON value with the same rules, so results and errors match:

- ``$`` the document; ``.name`` or ``['name']`` / ``["name"]`` a property; ``[n]`` an array
  element (``[-1]`` counts from the end); ``[*]`` / ``.*`` every element or property value;
  ``[a,b]`` several elements; ``[a:b]``, ``[:b]``, ``[a:]`` a slice; ``..name`` a deep scan.
  A path that does not start with ``$`` is read as ``$.`` followed by it (Jayway's rule).
- A *definite* path (no wildcard, scan, slice or index list) yields one value or fails with
  :class:`PathNotFound` ("No results for path"); an indefinite one yields the list of every
  match (possibly empty), skipping branches that do not fit.
- Filters (``[?(...)]``), functions (``.length()``) and lists of properties (``['a','b']``) are
  not implemented: :func:`parse_path` raises :class:`UnsupportedPath` naming them, and the SQL
  front end refuses such a path when it plans the query.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

__all__ = ["JsonPath", "JsonPathError", "PathNotFound", "UnsupportedPath", "parse_path", "split_mode"]


class JsonPathError(ValueError):
    """The path is not a valid JSONPath (Jayway's InvalidPathException)."""


class UnsupportedPath(JsonPathError):
    """The path uses a JSONPath feature changeflow does not implement (filters, functions)."""


class PathNotFound(LookupError):
    """A definite path matched nothing, or crossed a value of the wrong kind (strict mode's error)."""


@dataclass(frozen=True)
class Property:
    name: str

    def __str__(self) -> str:
        return f"['{self.name}']"


@dataclass(frozen=True)
class Indexes:
    indexes: tuple[int, ...]

    def __str__(self) -> str:
        return "[" + ",".join(str(i) for i in self.indexes) + "]"


@dataclass(frozen=True)
class Slice:
    start: int | None
    stop: int | None

    def __str__(self) -> str:
        return f"[{'' if self.start is None else self.start}:{'' if self.stop is None else self.stop}]"


@dataclass(frozen=True)
class Wildcard:
    def __str__(self) -> str:
        return "[*]"


@dataclass(frozen=True)
class Scan:
    """``..`` : the following token applied at every depth."""

    def __str__(self) -> str:
        return ".."


Token = Property | Indexes | Slice | Wildcard | Scan

_MODE = re.compile(r"^\s*(strict|lax)\s+(.+)$", re.IGNORECASE | re.DOTALL)


def split_mode(spec: str) -> tuple[str, str]:
    """``('lax'|'strict', path)`` of a SQL/JSON path spec; no prefix means strict (as in Flink)."""
    match = _MODE.match(spec)
    if match is None:
        return "strict", spec
    return match.group(1).lower(), match.group(2)


@dataclass(frozen=True)
class JsonPath:
    """A parsed SQL/JSON path: its mode and its JSONPath tokens."""

    spec: str
    mode: str
    tokens: tuple[Token, ...]

    @property
    def definite(self) -> bool:
        """Whether the path names at most one value (Jayway's ``isDefinite``)."""
        return all(_token_definite(t) for t in self.tokens)

    def evaluate(self, document: Any) -> Any:
        """The value (definite path) or list of values (indefinite) the path selects in ``document``.

        Raises :class:`PathNotFound` where Jayway throws without ``SUPPRESS_EXCEPTIONS`` (the
        caller decides what lax mode makes of it).
        """
        hits: list[Any] = []
        _walk(self.tokens, 0, document, hits, upstream_definite=True)
        if not self.definite:
            return hits
        if not hits:
            raise PathNotFound("No results for path: $" + "".join(str(t) for t in self.tokens))
        return hits[0]


def _token_definite(token: Token) -> bool:
    return isinstance(token, Property) or isinstance(token, Indexes) and len(token.indexes) == 1


def parse_path(spec: str) -> JsonPath:
    """Parse a SQL/JSON path spec (``'lax $.a[0]'``); :class:`JsonPathError` if it is not valid.

    >>> parse_path("lax $.a['b c'][0]").tokens
    (Property(name='a'), Property(name='b c'), Indexes(indexes=(0,)))
    >>> parse_path("$.a").mode
    'strict'
    """
    mode, text = split_mode(spec)
    return JsonPath(spec, mode, tuple(_Parser(text).tokens()))


class _Parser:
    def __init__(self, text: str) -> None:
        text = text.strip()
        if not text:
            raise JsonPathError("Path may not be null empty")
        if text[0] not in "$@":
            text = "$." + text  # Jayway reads 'a.b' as '$.a.b'
        if text.endswith("."):
            raise JsonPathError("Path must not end with a '.' or '..'")
        self.text = text
        self.pos = 1

    def fail(self, message: str) -> JsonPathError:
        return JsonPathError(f"{message} at position {self.pos} in path {self.text!r}")

    def tokens(self) -> list[Token]:
        if self.text[0] == "@":
            raise UnsupportedPath(f"a path relative to '@' ({self.text!r}) is only valid inside a filter")
        out: list[Token] = []
        while self.pos < len(self.text):
            c = self.text[self.pos]
            if c == "[":
                out.extend(self.bracket())
            elif c == ".":
                if self.text.startswith("..", self.pos):
                    out.append(Scan())
                    self.pos += 2
                    if self.pos < len(self.text) and self.text[self.pos] == "[":
                        continue
                else:
                    self.pos += 1
                    if self.pos < len(self.text) and self.text[self.pos] == "[":
                        continue  # Jayway accepts "$.['a.b']"
                out.append(self.dotted())
            elif c.isspace():
                self.pos += 1
            else:
                raise self.fail(f"Illegal character {c!r}, expected '.' or '['")
        return out

    def dotted(self) -> Token:
        start = self.pos
        while self.pos < len(self.text) and self.text[self.pos] not in ".[(":
            if self.text[self.pos] == " ":
                raise self.fail("Use bracket notion ['my prop'] if your property contains blank characters")
            self.pos += 1
        name = self.text[start:self.pos]
        if self.pos < len(self.text) and self.text[self.pos] == "(":
            raise UnsupportedPath(f"JSON path function {name}() is not supported by changeflow")
        if name == "*":
            return Wildcard()
        if not name:
            raise self.fail("Property name expected")
        return Property(name)

    def bracket(self) -> list[Token]:
        end = self._closing()
        inner = self.text[self.pos + 1:end].strip()
        self.pos = end + 1
        if inner.startswith("?"):
            raise UnsupportedPath(f"JSON path filter [{inner}] is not supported by changeflow")
        if inner == "*":
            return [Wildcard()]
        if inner[:1] in ("'", '"'):
            names = _quoted_names(inner)
            if names is None:
                raise self.fail(f"Bad property list [{inner}]")
            if len(names) > 1:
                raise UnsupportedPath(f"JSON path property list [{inner}] is not supported by changeflow")
            return [Property(names[0])]
        if ":" in inner:
            parts = inner.split(":")
            if len(parts) != 2:
                raise self.fail(f"Bad array slice [{inner}]")
            start, stop = (self._int(p) if p.strip() else None for p in parts)
            return [Slice(start, stop)]
        return [Indexes(tuple(self._int(p) for p in inner.split(",")))]

    def _closing(self) -> int:
        quote = None
        for i in range(self.pos + 1, len(self.text)):
            c = self.text[i]
            if quote:
                if c == quote and self.text[i - 1] != "\\":
                    quote = None
            elif c in ("'", '"'):
                quote = c
            elif c == "]":
                return i
        raise self.fail("Property has not been closed - missing closing ]")

    def _int(self, text: str) -> int:
        text = text.strip()
        if not re.fullmatch(r"-?\d+", text):
            raise self.fail(f"Bad array index {text!r}")
        return int(text)


def _quoted_names(inner: str) -> list[str] | None:
    names = []
    for m in re.finditer(r"\s*(?:'((?:[^'\\]|\\.)*)'|\"((?:[^\"\\]|\\.)*)\")\s*(,|$)", inner):
        names.append((m.group(1) if m.group(1) is not None else m.group(2)).replace("\\'", "'"))
        if m.end() == len(inner):
            return names
    return None


# ---------------------------------------------------------------------------------------------
#  Evaluation, as Jayway walks a document (without SUPPRESS_EXCEPTIONS: the caller handles lax).
# ---------------------------------------------------------------------------------------------


def _walk(tokens: tuple[Token, ...], i: int, model: Any, hits: list[Any], upstream_definite: bool) -> None:
    if i == len(tokens):
        hits.append(model)
        return
    token = tokens[i]
    leaf = i == len(tokens) - 1
    definite_here = upstream_definite and _token_definite(token)
    if isinstance(token, Property):
        if not isinstance(model, dict):
            if upstream_definite:
                raise PathNotFound(f"Expected to find an object with property {token} in path "
                                   f"but found '{_kind(model)}'. This is not a json object.")
            return
        if token.name not in model:
            if leaf or not definite_here:
                return  # a missing leaf is no hit; a definite path then fails for want of one
            raise PathNotFound(f"Missing property in path {token}")
        _walk(tokens, i + 1, model[token.name], hits, definite_here)
    elif isinstance(token, Indexes | Slice):
        if not isinstance(model, list):
            if upstream_definite:
                raise PathNotFound(f"Filter: {token} can only be applied to arrays. "
                                   f"Current context is: {_kind(model)}")
            return
        for index in _positions(token, len(model)):
            _walk(tokens, i + 1, model[index], hits, definite_here)
    elif isinstance(token, Wildcard):
        values = model.values() if isinstance(model, dict) else model if isinstance(model, list) else ()
        for value in list(values):
            _walk(tokens, i + 1, value, hits, False)
    else:  # Scan: the next token at this level and at every level below, depth first
        _scan(tokens, i + 1, model, hits)


def _scan(tokens: tuple[Token, ...], i: int, model: Any, hits: list[Any]) -> None:
    if i == len(tokens):
        raise JsonPathError("Path must not end with a '.' or '..'")
    token = tokens[i]
    matches = (isinstance(token, Property) and isinstance(model, dict) and token.name in model
               or isinstance(token, Wildcard) and isinstance(model, dict | list)
               or isinstance(token, Indexes | Slice) and isinstance(model, list))
    if matches:
        _walk(tokens, i, model, hits, False)
    children = model.values() if isinstance(model, dict) else model if isinstance(model, list) else ()
    for child in list(children):
        _scan(tokens, i, child, hits)


def _positions(token: Indexes | Slice, length: int) -> list[int]:
    if isinstance(token, Indexes):
        out = []
        for index in token.indexes:
            effective = index + length if index < 0 else index
            if 0 <= effective < length:
                out.append(effective)
        return out
    start = 0 if token.start is None else (max(0, length + token.start) if token.start < 0 else token.start)
    stop = length if token.stop is None else (length + token.stop if token.stop < 0 else min(length, token.stop))
    return list(range(start, stop))


def _kind(model: Any) -> str:
    if model is None:
        return "null"
    return {list: "java.util.ArrayList", dict: "java.util.LinkedHashMap", str: "java.lang.String",
            bool: "java.lang.Boolean"}.get(type(model), "java.lang.Number")
