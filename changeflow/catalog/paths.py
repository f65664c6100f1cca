"""Object paths: ``catalog.database.name``, as Flink's SQL and ``from_path`` spell them.

A path is written as one string with dots between its parts; a part holding a dot or
a backquote is backquoted (a backquote inside doubled), as in Flink SQL. The SQL front
end joins the parts it parsed with :func:`join_path`, and the catalog splits the string
again with :func:`split_path`, so every name-taking API (``from_path``,
``create_temporary_view``, ``INSERT INTO``) accepts ``t``, ``db.t`` and ``c.db.t``.

>>> split_path("c1.`my.db`.t")
['c1', 'my.db', 't']
>>> join_path(["c1", "my.db", "t"])
'c1.`my.db`.t'
>>> ObjectPath("c1", "db1", "t").quoted
'`c1`.`db1`.`t`'
"""

from __future__ import annotations

from dataclasses import dataclass

from changeflow.plan.type_inference import PlanError


@dataclass(frozen=True)
class ObjectPath:
    """The full identifier of a table, view or database object."""

    catalog: str
    database: str
    name: str

    @property
    def identifier(self) -> str:
        """``c.db.t``, as Flink prints an identifier in plans and most messages."""
        return f"{self.catalog}.{self.database}.{self.name}"

    @property
    def quoted(self) -> str:
        """```c`.`db`.`t```, as Flink prints it in DDL and some messages."""
        return f"`{self.catalog}`.`{self.database}`.`{self.name}`"


def join_path(parts: list[str]) -> str:
    """The parts of an identifier as one path string (backquoting a part that needs it)."""
    return ".".join(f"`{p.replace('`', '``')}`" if "." in p or "`" in p else p for p in parts)


def split_path(path: str) -> list[str]:
    """The parts of a path string (``join_path``'s inverse); unquoted parts are taken as written."""
    parts: list[str] = []
    current: list[str] = []
    i, quoted = 0, False
    while i < len(path):
        ch = path[i]
        if ch == "`":
            if quoted and path[i + 1:i + 2] == "`":
                current.append("`")
                i += 1
            else:
                quoted = not quoted
        elif ch == "." and not quoted:
            parts.append("".join(current))
            current = []
        else:
            current.append(ch)
        i += 1
    parts.append("".join(current))
    if quoted or len(parts) > 3 or any(p == "" for p in parts):
        raise PlanError(f"invalid object path {path!r}: expected [[catalog.]database.]name")
    return parts
