"""Processing-time TTL of a keyed function's state (Flink's ``StateTtlConfig``), on the per-key dict.

A ``KeyedProcessFunction``'s state lives in one dict per key (state name ->
value, list, dict or accumulator, :mod:`.process`). A state whose descriptor
has ``enable_time_to_live(config)`` also keeps, under the reserved name
:func:`stamps_name`, the processing time (ms, the kernel's clock) of its last
access that counts: one stamp for a value / reducing / aggregating state, one
per element of a list state, one per entry of a map state, as Flink's
``TtlValueState``, ``TtlListState`` (per element) and ``TtlMapState`` (per
user key) do. :class:`KeyedTtl` holds the rules:

- a stamp is set on every write (``OnCreateAndWrite``) and, with
  ``OnReadAndWrite``, also on every read of an unexpired value;
- a value stamped at ``t`` is expired once ``now >= t + ttl`` (Flink's
  ``TtlUtils.expired``: the expiration time has been reached);
- reading an expired value removes it (cleanup on access) and returns it once
  with ``ReturnExpiredIfNotCleanedUp``, else nothing (``NeverReturnExpired``); a
  reducing / aggregating state folds a new value into a fresh start when the
  stored one expired.

Where changeflow differs from Flink: there is no background cleanup (Flink's
incremental / full-snapshot / compaction-filter strategies are accepted and
have no effect), so an expired value stays stored until its key is next
accessed; it is never observable, except as ``ReturnExpiredIfNotCleanedUp``
allows, as in Flink. Only processing time exists (as in Flink 2.3).

>>> now = [0]
>>> ttl = KeyedTtl(1000, update_on_read=False, return_expired=False, clock=lambda: now[0])
>>> values = {}
>>> ttl.write(values, "n", 5); now[0] = 999; ttl.read(values, "n")
5
>>> now[0] = 1000; ttl.read(values, "n") is None, values
(True, {})
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

__all__ = ["KeyedTtl", "stamps_name"]


def stamps_name(name: str) -> str:
    """The reserved entry of a key's dict holding the stamps of state ``name`` (no user name starts with NUL)."""
    return "\x00ttl:" + name


@dataclass(frozen=True)
class KeyedTtl:
    """The TTL rules of one state: its ``ttl_ms``, update type, visibility and the kernel's clock."""

    ttl_ms: int
    update_on_read: bool   # OnReadAndWrite (else OnCreateAndWrite)
    return_expired: bool   # ReturnExpiredIfNotCleanedUp (else NeverReturnExpired)
    clock: Callable[[], int]

    def expired(self, stamp: int, now: int) -> bool:
        return now >= stamp + self.ttl_ms

    # --- one value (ValueState, ReducingState, AggregatingState) ---------------------
    def read(self, values: dict, name: str, *, for_update: bool = False) -> Any:
        """The value of ``name``, or None when absent or expired (then removed).

        ``for_update``: the read of a reducing / aggregating ``add``, which never sees an
        expired value (Flink's ``TtlReduceFunction`` folds into a fresh start) and does not restamp
        (the write that follows does).
        """
        if name not in values:
            return None
        now = self.clock()
        value = values[name]
        if self.expired(values.get(stamps_name(name), now), now):
            self.clear(values, name)
            return value if self.return_expired and not for_update else None
        if self.update_on_read and not for_update:
            values[stamps_name(name)] = now
        return value

    def write(self, values: dict, name: str, value: Any) -> None:
        values[name] = value
        values[stamps_name(name)] = self.clock()

    @staticmethod
    def clear(values: dict, name: str) -> None:
        values.pop(name, None)
        values.pop(stamps_name(name), None)

    # --- a list, stamped per element (ListState) -------------------------------------
    def read_list(self, values: dict, name: str) -> list:
        """The list's elements that are visible now; expired ones are removed, the others restamped on read."""
        elements = values.get(name, [])
        if not elements:
            return []
        now = self.clock()
        stamps = values.get(stamps_name(name), [now] * len(elements))
        alive = [(e, s) for e, s in zip(elements, stamps, strict=True) if not self.expired(s, now)]
        visible = list(elements) if self.return_expired else [e for e, _ in alive]
        if not alive:
            self.clear(values, name)
        else:
            values[name] = [e for e, _ in alive]
            values[stamps_name(name)] = [now if self.update_on_read else s for _, s in alive]
        return visible

    def append(self, values: dict, name: str, elements: list) -> None:
        self.read_list_for_write(values, name)
        now = self.clock()
        values.setdefault(name, []).extend(elements)
        values.setdefault(stamps_name(name), []).extend([now] * len(elements))

    def replace_list(self, values: dict, name: str, elements: list) -> None:
        if not elements:
            self.clear(values, name)
            return
        values[name] = list(elements)
        values[stamps_name(name)] = [self.clock()] * len(elements)

    def read_list_for_write(self, values: dict, name: str) -> None:
        """Drops expired elements before an append (they would otherwise sit among fresh ones)."""
        elements = values.get(name)
        if elements:
            now = self.clock()
            stamps = values.get(stamps_name(name), [now] * len(elements))
            alive = [(e, s) for e, s in zip(elements, stamps, strict=True) if not self.expired(s, now)]
            values[name] = [e for e, _ in alive]
            values[stamps_name(name)] = [s for _, s in alive]

    # --- a map, stamped per entry (MapState) -----------------------------------------
    def read_entry(self, values: dict, name: str, key: Any) -> tuple[bool, Any]:
        """``(found, value)`` of the map entry ``key`` (an expired entry is removed; found only if returned)."""
        entries = values.get(name)
        if not entries or key not in entries:
            return False, None
        now = self.clock()
        stamps = values.setdefault(stamps_name(name), {})
        value = entries[key]
        if self.expired(stamps.get(key, now), now):
            self.remove_entry(values, name, key)
            return self.return_expired, (value if self.return_expired else None)
        if self.update_on_read:
            stamps[key] = now
        return True, value

    def entries(self, values: dict, name: str) -> dict:
        """A copy of the map's visible entries; expired entries are removed, the others restamped on read."""
        entries = values.get(name)
        if not entries:
            return {}
        visible = {}
        for key in list(entries):
            found, value = self.read_entry(values, name, key)
            if found:
                visible[key] = value
        return visible

    def put_entries(self, values: dict, name: str, entries: dict) -> None:
        if not entries:
            return
        now = self.clock()
        values.setdefault(name, {}).update(entries)
        stamps = values.setdefault(stamps_name(name), {})
        for key in entries:
            stamps[key] = now

    def remove_entry(self, values: dict, name: str, key: Any) -> None:
        entries = values.get(name)
        if entries is None:
            return
        entries.pop(key, None)
        values.get(stamps_name(name), {}).pop(key, None)
        if not entries:
            self.clear(values, name)
