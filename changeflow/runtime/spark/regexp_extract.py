"""``REGEXP_EXTRACT(s, regex[, group])`` as Flink computes it, in Spark's JVM.

Flink returns the ``group``-th group of the first match of ``regex`` (Java's
``Matcher.find``; 0 is the whole match) and NULL when nothing matches, when that
group took no part in the match (``(x)?ref`` on ``ref``), or when the pattern has
no such group. Spark's ``regexp_extract`` runs the same Java regex but gives ``''``
for the first two and fails on the third, and its ``regexp_instr`` ignores the
group. So the group's part in the first match is tested on its own: the pattern
with an empty named group put at the end of group ``g`` (it matches iff group ``g``
did), searched as ``^(?>[\\s\\S]*?(?>P'))\\k<mark>``. The lazy prefix tries the
start positions in ``find``'s order, and the atomic group keeps the first match
found, the one Flink's ``find`` takes; the back-reference to the mark then fails
exactly when group ``g`` did not take part. Both patterns are built once, at plan
time, from a literal pattern (:func:`~changeflow.plan.java_regex.group_ends` reads Java's
regex syntax).
"""

from __future__ import annotations

from pyspark.sql import Column
from pyspark.sql import functions as F

from changeflow.plan.java_regex import group_ends

MARK = "cfgroupmark"


def regexp_extract(text: Column, pattern: str | None, group: int) -> Column:
    """The column of ``REGEXP_EXTRACT(text, pattern, group)`` with Flink's NULLs (see the module)."""
    ends = group_ends(pattern) if pattern is not None else []
    if pattern is None or not 0 <= group <= len(ends):
        return F.lit(None).cast("string")   # Flink: NULL (Java throws on a group the pattern lacks)
    if group == 0:
        took_part = F.call_function("rlike", text, F.lit(pattern))
    else:
        end = ends[group - 1]
        marked = pattern[:end] + f"(?<{MARK}>)" + pattern[end:]
        test = "^(?>[\\s\\S]*?(?>" + marked + "))\\k<" + MARK + ">"
        took_part = F.call_function("rlike", text, F.lit(test))
    return F.when(took_part, F.call_function("regexp_extract", text, F.lit(pattern), F.lit(group)))
