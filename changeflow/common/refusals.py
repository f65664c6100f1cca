"""PyFlink names changeflow does not implement, refused by name wherever a program reaches them.

A PyFlink program ports by changing its imports, so a method PyFlink 2.3 has must never fail as
an unknown attribute: it raises :class:`NotImplementedError` naming the PyFlink name and, where
there is one, what to use instead. Each front end keeps its own table of such names
(``table/pyflink_names.py``, ``datastream/pyflink_names.py``); this is the mechanism they share.

>>> names = Refusals({"Env": {"add_jar": "no jars on Spark"}})
>>> names.attribute("Env", "add_jar")()
Traceback (most recent call last):
    ...
NotImplementedError: Env.add_jar (PyFlink's) is not supported by changeflow: no jars on Spark
>>> names.attribute("Env", "nonsense")
Traceback (most recent call last):
    ...
AttributeError: 'Env' object has no attribute 'nonsense'
"""

from __future__ import annotations

from typing import Any, NoReturn

__all__ = ["Refusals"]


class Refusals:
    """A table ``owner -> {PyFlink name: why not, and what to use instead}``."""

    def __init__(self, table: dict[str, dict[str, str]]) -> None:
        self.table = table

    def refuse(self, owner: str, name: str) -> NoReturn:
        """Raise for PyFlink's ``owner.name``."""
        raise NotImplementedError(f"{owner}.{name} (PyFlink's) is not supported by changeflow: "
                                  f"{self.table[owner][name]}")

    def attribute(self, owner: str, name: str) -> Any:
        """A callable that raises for ``owner.name``; an ``AttributeError`` for a name PyFlink does not have."""
        if name not in self.table.get(owner, {}):
            raise AttributeError(f"{owner!r} object has no attribute {name!r}")

        def unsupported(*args: Any, **kwargs: Any) -> NoReturn:
            self.refuse(owner, name)

        unsupported.__name__ = name
        return unsupported
