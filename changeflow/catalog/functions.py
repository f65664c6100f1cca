"""User-defined functions registered by name (``create_temporary_function`` and friends).

Flink resolves a function name in SQL case-insensitively: temporary system
functions first, then built-in functions, then temporary catalog functions.
changeflow keeps the two temporary kinds here; the SQL front end asks
:meth:`FunctionCatalog.lookup` for a name it does not know as a built-in, and a
temporary system function may shadow a built-in (:meth:`system_function`).

>>> from changeflow.common.types import DataTypes
>>> from changeflow.functions import ScalarFunction, UserFunction
>>> class One(ScalarFunction):
...     def eval(self):
...         return 1
>>> functions = FunctionCatalog()
>>> functions.create("one", UserFunction("one", "scalar", One(), DataTypes.INT()), system=False)
>>> functions.lookup("ONE").name, functions.list()
('one', ['one'])
"""

from __future__ import annotations

from changeflow.functions import UserFunction
from changeflow.plan.type_inference import PlanError


class FunctionCatalog:
    """The temporary system and temporary catalog functions of one environment."""

    def __init__(self) -> None:
        self._system: dict[str, UserFunction] = {}
        self._catalog: dict[str, UserFunction] = {}

    def create(self, name: str, function: UserFunction, system: bool, if_not_exists: bool = False) -> None:
        """Register ``function`` as ``name``; Flink's error if a function of that kind has the name."""
        space = self._system if system else self._catalog
        key = name.lower()
        if key in space:
            if if_not_exists:
                return
            kind = "temporary system function" if system else "temporary catalog function"
            raise PlanError(f"Could not register {kind} '{name}' as a function with the same name already exists.")
        space[key] = function

    def drop(self, name: str, system: bool, if_exists: bool = False) -> bool:
        space = self._system if system else self._catalog
        if space.pop(name.lower(), None) is not None:
            return True
        if if_exists:
            return False
        kind = "Temporary system function" if system else "Temporary catalog function"
        raise PlanError(f"{kind} {name} doesn't exist")

    def system_function(self, name: str) -> UserFunction | None:
        """The temporary system function ``name`` (it shadows a built-in of that name), if any."""
        return self._system.get(name.lower())

    def lookup(self, name: str) -> UserFunction | None:
        """The function ``name`` resolves to: a temporary system one, else a temporary catalog one."""
        key = name.lower()
        return self._system.get(key) or self._catalog.get(key)

    def list(self) -> list[str]:
        """Every registered function name, sorted (``SHOW USER FUNCTIONS``)."""
        return sorted(set(self._system) | set(self._catalog))
