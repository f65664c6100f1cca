"""``EnvironmentSettings`` and ``TableConfig``, as in PyFlink: the mode and the configuration of an environment."""

from __future__ import annotations

from typing import Any

from changeflow.common.configuration import Configuration

__all__ = ["EnvironmentSettings", "TableConfig"]


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
