"""The Table API's windows, as PyFlink's ``pyflink.table.window``: group windows
(:class:`Tumble`, :class:`Slide`, :class:`Session`) for ``Table.window`` and over windows
(:class:`Over`) for ``Table.over_window``.

These classes only describe a window; :mod:`changeflow.table.window_tables` plans it on the
plan nodes SQL uses (a group window as SQL's legacy ``GROUP BY TUMBLE(...)``, an over window as
SQL's ``OVER``).

>>> from changeflow.table.expressions import col, lit
>>> Tumble.over(lit(10).seconds).on(col("ts")).alias("w").alias_name
'w'
>>> Over.partition_by(col("k")).order_by(col("ts")).alias("w").alias_name
'w'
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from changeflow.expressions import Call, Column, Expression, Literal

__all__ = ["GroupWindow", "Over", "OverWindow", "Session", "Slide", "Tumble"]


def _alias(alias: object) -> str:
    if isinstance(alias, Column):
        return alias.name
    if not isinstance(alias, str) or not alias:
        raise TypeError(f"a window's alias is a name, got {alias!r}")
    return alias


@dataclass(frozen=True)
class GroupWindow:
    """A group window (``Tumble``/``Slide``/``Session`` with its time field and alias).

    ``kind`` is TUMBLE, SLIDE or SESSION; ``size`` the size (the gap of a session) and
    ``slide`` a sliding window's slide, as the interval expressions given.
    """

    kind: str
    size: Expression
    slide: Expression | None = None
    time_field: Expression | None = None
    alias_name: str | None = None

    def on(self, time_field: Expression | str) -> "GroupWindow":
        """The time attribute the window is defined on."""
        return replace(self, time_field=Column(time_field) if isinstance(time_field, str) else time_field)

    def every(self, slide: Expression) -> "GroupWindow":
        """A sliding window's slide (``Slide.over(size).every(slide)``)."""
        if self.kind != "SLIDE":
            raise TypeError(f"every(...) is a Slide window's; this is a {self.kind.title()} window")
        return replace(self, slide=slide)

    def alias(self, alias: str) -> "GroupWindow":
        """The name ``group_by`` and the window properties (``col(alias).start``) refer to."""
        if self.time_field is None:
            raise TypeError("a group window needs on(time_field) before alias(...)")
        return replace(self, alias_name=_alias(alias))


class Tumble:
    """Tumbling (fixed-size, non-overlapping) windows: ``Tumble.over(lit(10).minutes).on(col('ts')).alias('w')``."""

    @classmethod
    def over(cls, size: Expression) -> GroupWindow:
        return GroupWindow("TUMBLE", size)


class Slide:
    """Sliding (hopping) windows: ``Slide.over(lit(10).minutes).every(lit(5).minutes).on(col('ts')).alias('w')``."""

    @classmethod
    def over(cls, size: Expression) -> GroupWindow:
        return GroupWindow("SLIDE", size)


class Session:
    """Session windows (closed after a gap of inactivity): ``Session.with_gap(lit(10).minutes).on(...)``."""

    @classmethod
    def with_gap(cls, gap: Expression) -> GroupWindow:
        return GroupWindow("SESSION", gap)


@dataclass(frozen=True)
class OverWindow:
    """An over window: partitioned by ``partition``, ordered by ``order``, the frame from
    ``lower`` (``preceding``) to ``upper`` (``following``); None: the defaults, UNBOUNDED_RANGE
    and the current row or range."""

    partition: tuple[Expression, ...] = ()
    order: Expression | None = None
    lower: Expression | None = None
    upper: Expression | None = None
    alias_name: str | None = None

    def order_by(self, order_by: Expression | str) -> "OverWindow":
        """The time attribute the rows are ordered by."""
        return replace(self, order=Column(order_by) if isinstance(order_by, str) else order_by)

    def preceding(self, preceding: Expression) -> "OverWindow":
        """The frame's start: ``UNBOUNDED_RANGE``, ``UNBOUNDED_ROW``, ``row_interval(n)``, an interval."""
        return replace(self, lower=preceding)

    def following(self, following: Expression) -> "OverWindow":
        """The frame's end: ``CURRENT_ROW`` or ``CURRENT_RANGE`` (the default matches the preceding's kind)."""
        return replace(self, upper=following)

    def alias(self, alias: str) -> "OverWindow":
        """The name an aggregate's ``.over(col(alias))`` refers to."""
        if self.order is None:
            raise TypeError("an over window needs order_by(...) before alias(...)")
        return replace(self, alias_name=_alias(alias))


class Over:
    """Over windows: ``Over.partition_by(col('k')).order_by(col('ts')).preceding(UNBOUNDED_RANGE).alias('w')``."""

    @classmethod
    def order_by(cls, order_by: Expression | str) -> OverWindow:
        return OverWindow().order_by(order_by)

    @classmethod
    def partition_by(cls, *partition_by: Expression | str) -> OverWindow:
        return OverWindow(tuple(Column(p) if isinstance(p, str) else p for p in partition_by))


def bound_name(e: Expression | None) -> str | None:
    """The name of an ``UNBOUNDED_ROW``/``UNBOUNDED_RANGE``/``CURRENT_ROW``/``CURRENT_RANGE`` bound."""
    if isinstance(e, Call) and e.function == "over_bound" and isinstance(e.args[0], Literal):
        return str(e.args[0].value)
    return None
