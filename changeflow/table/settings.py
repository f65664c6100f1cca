"""``EnvironmentSettings`` and ``TableConfig``, as in PyFlink: the mode and the configuration of an environment."""

from __future__ import annotations

import datetime
import enum
from typing import Any

from changeflow.common.configuration import Configuration
from changeflow.config.durations import to_millis
from changeflow.table.pyflink_names import refused_attribute

__all__ = ["EnvironmentSettings", "SqlDialect", "TableConfig"]


class EnvironmentSettings:
    """Whether the environment runs streaming (changelogs) or batch (final results)."""

    def __init__(self, streaming: bool = True, configuration: Configuration | None = None) -> None:
        self._streaming = streaming
        self._configuration = configuration or Configuration()

    @staticmethod
    def in_streaming_mode() -> "EnvironmentSettings":
        return EnvironmentSettings(True)

    @staticmethod
    def in_batch_mode() -> "EnvironmentSettings":
        return EnvironmentSettings(False)

    @staticmethod
    def new_instance() -> "EnvironmentSettings.Builder":
        return EnvironmentSettings.Builder()

    def is_streaming_mode(self) -> bool:
        return self._streaming

    def get_configuration(self) -> Configuration:
        return self._configuration

    class Builder:
        def __init__(self) -> None:
            self._streaming = True
            self._configuration = Configuration()

        def in_streaming_mode(self) -> "EnvironmentSettings.Builder":
            self._streaming = True
            return self

        def in_batch_mode(self) -> "EnvironmentSettings.Builder":
            self._streaming = False
            return self

        def with_configuration(self, configuration: Configuration) -> "EnvironmentSettings.Builder":
            self._configuration = configuration
            return self

        def build(self) -> "EnvironmentSettings":
            return EnvironmentSettings(self._streaming, self._configuration)


class TableConfig:
    """Typed access to the environment's configuration (Flink's keys)."""

    def __init__(self, configuration: Configuration) -> None:
        self._configuration = configuration

    def set(self, key: str, value: Any) -> "TableConfig":
        """Set a key; unknown ``table.*`` / ``execution.*`` keys and bad values raise."""
        self._configuration.set(key, value)
        return self

    def get(self, key: str, default: Any = None) -> Any:
        """The value set for ``key`` as a string, else ``default`` (PyFlink's behaviour)."""
        if self._configuration.contains_key(key):
            return self._configuration.get_string(key, default)
        return default

    def get_configuration(self) -> Configuration:
        return self._configuration

    def add_configuration(self, configuration: Configuration) -> None:
        self._configuration.add_all(configuration)

    @staticmethod
    def get_default() -> "TableConfig":
        return TableConfig(Configuration())

    def to_map(self) -> dict[str, str]:
        """Every key set, with its value as a string."""
        return self._configuration.to_dict()

    # PyFlink's typed accessors, each over its Flink key
    def get_local_timezone(self) -> str:
        return self.get("table.local-time-zone", "default")

    def set_local_timezone(self, timezone_id: str) -> None:
        self.set("table.local-time-zone", timezone_id)

    def get_idle_state_retention(self) -> datetime.timedelta:
        """``table.exec.state.ttl`` (0: state kept forever)."""
        value = self._configuration.get("table.exec.state.ttl", None)
        return datetime.timedelta(0) if value is None else datetime.timedelta(milliseconds=to_millis(value))

    def set_idle_state_retention(self, duration: datetime.timedelta) -> None:
        self.set("table.exec.state.ttl", f"{to_millis(duration)} ms")

    def get_python_executable(self) -> str | None:
        return self.get("python.executable")

    def set_python_executable(self, python_exec: str) -> None:
        self.set("python.executable", python_exec)

    def get_sql_dialect(self) -> "SqlDialect":
        return SqlDialect.DEFAULT

    def set_sql_dialect(self, sql_dialect: "SqlDialect") -> None:
        """Only Flink's default dialect: changeflow has no Hive dialect."""
        if sql_dialect != SqlDialect.DEFAULT:
            raise NotImplementedError(f"TableConfig.set_sql_dialect({sql_dialect}) is not supported by changeflow: "
                                      "only SqlDialect.DEFAULT")

    def __getattr__(self, name: str) -> Any:
        return refused_attribute("TableConfig", name)


class SqlDialect(enum.Enum):
    """PyFlink's ``SqlDialect``: changeflow parses Flink's default dialect only."""

    DEFAULT = 0
    HIVE = 1
