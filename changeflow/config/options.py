"""The registry of configuration keys changeflow knows: Flink's names, types and defaults.

Each key is a ``ConfigOption``: its type, its default, a description and, for an enum, the
accepted values. ``register`` adds one, so any module can declare the options it reads::

    MY_OPTION = register(ConfigOption("changeflow.my-module.thing", OptionType.INT, default=3,
                                      description="..."))

Register at import time of the module that reads the option. changeflow's own declarations
are grouped by area: :mod:`.execution_options` (``execution.*``, ``pipeline.*``,
``parallelism.*``), :mod:`.table_options` (mini-batch, the optimizer, state TTL),
:mod:`.sink_options` (sinks and the upsert materializer) and :mod:`.changeflow_options`
(``changeflow.*``); :mod:`changeflow.config` imports them all, so every key is registered
once the package is imported. A key's type and parsing are :mod:`.option_type`'s.

How keys are treated when set:

- A key registered here (or one of its fallback spellings) has its value parsed and checked
  when it is set; a bad value raises ``ValueError`` naming the key, the value and what is
  accepted.
- A real Flink key changeflow does not register (:mod:`changeflow.config.flink_keys`) is
  accepted and ignored when it cannot change results (``pipeline.object-reuse``,
  ``taskmanager.*``, ``state.backend.type`` ...); one that would change results
  (``table.exec.source.idle-timeout``) is refused unless set to Flink's default.
- An unknown key under ``table.``, ``execution.``, ``parallelism.``, ``pipeline.`` or
  ``changeflow.`` raises ``ValueError`` with the closest known keys. Flink accepts a misspelt
  key and silently ignores it; changeflow does not.
- A key under ``spark.`` is passed through to Spark as a string, unvalidated: Spark owns it.
- Any other key that looks like a misspelling of a known key (one or two edits away, or its
  tail, as ``mini-batch.enabled``) raises ``ValueError`` with a "did you mean"; the rest are
  accepted and kept as strings, so user- and connector-defined keys work.

>>> lookup("table.exec.mini-batch.size").default
-1
>>> lookup("table.exec.mini-batch.allow-latency").parse("5 s")
datetime.timedelta(seconds=5)
>>> lookup("table.exec.sink.upsert-materialize.strategy").key
'table.exec.sink.upsert-materialize-strategy.type'
"""

from __future__ import annotations

import difflib
import functools
from typing import Any

from changeflow.config.flink_keys import FlinkKey, flink_key, known_spellings
from changeflow.config.option_type import ConfigOption, OptionType, to_config_string

# ConfigOption, OptionType and to_config_string are what register() and lookup() take and give.
__all__ = [
    "PASS_THROUGH_PREFIX",
    "VALIDATED_PREFIXES",
    "ConfigOption",
    "OptionType",
    "canonical_key",
    "check_key",
    "is_validated_key",
    "lookup",
    "misspelling_of",
    "register",
    "registered_options",
    "suggest_keys",
    "to_config_string",
]

VALIDATED_PREFIXES = ("table.", "execution.", "parallelism.", "pipeline.", "changeflow.")
"""Keys under these prefixes must be registered; an unknown one is an error."""

PASS_THROUGH_PREFIX = "spark."
"""Keys under this prefix go to Spark as strings; changeflow does not check them."""


# ----------------------------------------------------------------------------------------
#  The registry.
# ----------------------------------------------------------------------------------------

# Every registered spelling (primary and fallback keys) -> its option.
_BY_KEY: dict[str, ConfigOption] = {}


def register(option: ConfigOption) -> ConfigOption:
    """Add an option to the registry and return it, so a module can write
    ``MY_OPTION = register(ConfigOption(...))``.

    Registering an equal option again is a no-op (modules may be re-imported); a different
    option under a key or fallback key already taken raises ``ValueError``.
    """
    if not isinstance(option, ConfigOption):
        raise TypeError(f"register() takes a ConfigOption, got {type(option).__name__}")
    spellings = (option.key, *option.fallback_keys)
    for key in spellings:
        if key != key.lower() or any(ch.isspace() for ch in key):
            # Suggestions for misspelt keys compare lower-cased text against these keys.
            raise ValueError(f"cannot register {key!r}: keys are lower case without spaces")
        if key.startswith(PASS_THROUGH_PREFIX):
            raise ValueError(
                f"cannot register {key!r}: keys under {PASS_THROUGH_PREFIX!r} belong to Spark "
                f"and pass through unvalidated"
            )
        existing = _BY_KEY.get(key)
        if existing is not None and existing != option:
            raise ValueError(
                f"cannot register {option.key!r}: key {key!r} is already registered "
                f"for option {existing.key!r}"
            )
    for key in spellings:
        _BY_KEY[key] = option
    return option


def lookup(key: str) -> ConfigOption | None:
    """The option registered under a key or one of its fallback keys, or None."""
    return _BY_KEY.get(key)


def registered_options() -> list[ConfigOption]:
    """Every registered option once, sorted by key."""
    unique = {option.key: option for option in _BY_KEY.values()}
    return [unique[key] for key in sorted(unique)]


def canonical_key(key: str) -> str:
    """The primary key for a registered spelling; any other key unchanged."""
    option = _BY_KEY.get(key)
    return option.key if option is not None else key


def is_validated_key(key: str) -> bool:
    """True if the key falls under a prefix whose keys must be registered.

    The check ignores case and surrounding spaces, so ``"Table.Exec.Foo"`` is caught as an
    unknown key rather than kept as a stray string that nothing reads.
    """
    return key.strip().lower().startswith(VALIDATED_PREFIXES)


def suggest_keys(key: str, limit: int = 3) -> list[str]:
    """The registered keys closest to a (misspelt) key, best first."""
    candidates = {spelling: option.key for spelling, option in _BY_KEY.items()}
    matches = difflib.get_close_matches(key.strip().lower(), candidates, n=limit * 2, cutoff=0.6)
    suggestions: list[str] = []
    for match in matches:
        primary = candidates[match]
        if primary not in suggestions:
            suggestions.append(primary)
    return suggestions[:limit]


_NO_VALUE = object()


def check_key(key: str, value: Any = _NO_VALUE) -> ConfigOption | None:
    """The option for a key about to be set (to ``value``) or read; None for a free (unvalidated) key.

    Raises ``ValueError``, naming the key and the closest known keys, for

    - an unknown key under a validated prefix (``table.``, ``execution.`` ...);
    - a key that is not known but looks like a misspelling of a known one: within one or two
      edits of it (``tabel.exec.mini-batch.enabled``) or its tail (``mini-batch.enabled``
      for ``table.exec.mini-batch.enabled``);
    - a real Flink key that changeflow does not implement, set to a value other than Flink's
      default (:mod:`changeflow.config.flink_keys`).

    Flink's other real keys (``pipeline.*``, ``state.*``, ``taskmanager.*``, ``rest.*``,
    ``python.*`` ...) are accepted and ignored; ``spark.`` keys pass through unchecked.
    """
    if not isinstance(key, str):
        raise TypeError(f"a configuration key must be a string, got {type(key).__name__}")
    option = _BY_KEY.get(key)
    if option is not None:
        return option
    entry = flink_key(key)
    if entry is not None:
        if value is not _NO_VALUE and not entry.accepts(value):
            raise _unsupported_key_error(key, value, entry)
        # A key under a Flink-only namespace that Flink does not list (a plugin's or a reporter's
        # own key) is accepted, unless it is a slip: an edit or two away from a listed key
        # ("taskmanager.numberOfTaskSlot"), or the tail of a known one ("state.ttl" meant
        # "table.exec.state.ttl"). Every Flink key is listed, so a real one is never flagged.
        meant = [] if entry.listed else misspelling_of(key)
        if meant:
            raise _misspelt_key_error(key, meant)
        return None
    if is_validated_key(key):
        # A close Flink key changeflow ignores is as good a guess as a registered one.
        suggestions = misspelling_of(key) or suggest_keys(key)
        if suggestions:
            hint = _did_you_mean(suggestions)
        else:
            prefix = key.strip().lower().split(".", 1)[0] + "."
            same_prefix = [o.key for o in registered_options() if o.key.startswith(prefix)]
            if same_prefix:
                hint = f"Known keys under {prefix!r}: {', '.join(same_prefix)}."
            else:
                hint = f"changeflow knows no key under {prefix!r}."
        raise _unknown_key_error(key, hint)
    if key.strip().lower().startswith(PASS_THROUGH_PREFIX):
        return None
    meant = misspelling_of(key)
    if meant:
        raise _misspelt_key_error(key, meant)
    return None


def _misspelt_key_error(key: str, meant: list[str]) -> ValueError:
    return ValueError(
        f"Unknown configuration key {key!r}, which looks like a misspelling of a known key. "
        f"{_did_you_mean(meant)} changeflow rejects keys that are one or two edits away from, "
        f"or the tail of, a Flink, Spark or changeflow key (Flink would silently ignore them)."
    )


def _did_you_mean(suggestions: list[str]) -> str:
    hint = f"Did you mean {suggestions[0]!r}?"
    if len(suggestions) > 1:
        hint += f" Other close keys: {', '.join(repr(s) for s in suggestions[1:])}."
    return hint


def _unsupported_key_error(key: str, value: Any, entry: FlinkKey) -> ValueError:
    accepted = entry.accepted or (f"only Flink's default {entry.default!r} is accepted" if entry.default is not None
                                  else "changeflow accepts no value for it")
    note = f" {entry.note[0].upper()}{entry.note[1:]}." if entry.note else ""
    return ValueError(
        f"Configuration key {key!r} is a Flink key changeflow does not implement: ignoring it "
        f"when set to {value!r} would change what the job computes or keeps, so it is refused "
        f"({accepted}).{note}"
    )


def _allowed_edits(length: int) -> int:
    # Short keys are too close to ordinary words ("rest.port" / "test.port") to guess at.
    if length < 10:
        return 0
    return 1 if length < 20 else 2


def _edit_distance(a: str, b: str, limit: int) -> int:
    """Optimal string alignment distance (a transposition is one edit), or ``limit + 1`` if above it."""
    if abs(len(a) - len(b)) > limit:
        return limit + 1
    previous2: list[int] = []
    previous = list(range(len(b) + 1))
    for i in range(1, len(a) + 1):
        current = [i] + [0] * len(b)
        for j in range(1, len(b) + 1):
            cost = 0 if a[i - 1] == b[j - 1] else 1
            current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                current[j] = min(current[j], previous2[j - 2] + 1)
        if min(current) > limit:
            return limit + 1
        previous2, previous = previous, current
    return previous[-1]


def misspelling_of(key: str, limit: int = 3, registered_only: bool = False) -> list[str]:
    """The known keys (registered, Flink's, common Spark ones) that ``key`` looks like a misspelling of.

    A key is taken for a misspelling of a known key when it is within one edit of it (two for
    keys of 20 characters or more; keys under 10 characters are never guessed at), or when it
    is its tail: its last dot-separated parts (``mini-batch.enabled``, ``state.ttl``), or its
    last part alone if that is a hyphenated name (``max-flush-interval``). Closest first; empty
    for a key that is known or looks like nothing known. With ``registered_only``, only the
    tails of the keys changeflow registers count.

    >>> misspelling_of("tabel.exec.mini-batch.enabled")
    ['table.exec.mini-batch.enabled']
    >>> misspelling_of("mini-batch.enabled")
    ['table.exec.mini-batch.enabled']
    >>> misspelling_of("my.app.threshold")
    []
    """
    return list(_misspelling_of(key.strip().lower(), limit, registered_only, (id(_BY_KEY), len(_BY_KEY))))


@functools.lru_cache(maxsize=256)
def _misspelling_of(text: str, limit: int, registered_only: bool, registry: tuple) -> tuple[str, ...]:
    # Cached: Configuration.get checks a free key on every read. The registry's identity and
    # size are part of the cache key, so registering an option invalidates earlier answers.
    candidates = {spelling: option.key for spelling, option in _BY_KEY.items()}
    if not registered_only:
        for spelling in known_spellings():
            candidates.setdefault(spelling, spelling)
    if text in candidates:
        return ()
    ranked: dict[str, tuple[int, int]] = {}
    allowed = 0 if registered_only else _allowed_edits(len(text))
    for spelling, primary in candidates.items():
        if allowed:
            distance = _edit_distance(text, spelling, allowed)
            if distance <= allowed:
                rank = (0, distance)
                ranked[primary] = min(ranked.get(primary, rank), rank)
                continue
        tail_worthy = "." in text or "-" in text
        if tail_worthy and spelling.endswith("." + text):
            rank = (1, len(spelling) - len(text))
            ranked[primary] = min(ranked.get(primary, rank), rank)
    return tuple(sorted(ranked, key=lambda k: (ranked[k], k))[:limit])


_PREFIXES_TEXT = (
    ", ".join(repr(p) for p in VALIDATED_PREFIXES[:-1]) + f" and {VALIDATED_PREFIXES[-1]!r}"
)


def _unknown_key_error(key: str, hint: str) -> ValueError:
    return ValueError(
        f"Unknown configuration key {key!r}. {hint} changeflow rejects unknown keys under "
        f"{_PREFIXES_TEXT} (Flink would silently ignore them); keys under "
        f"{PASS_THROUGH_PREFIX!r} go to Spark unchecked."
    )
