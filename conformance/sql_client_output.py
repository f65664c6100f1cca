"""What of Flink's SQL client output changeflow's client must reproduce, and how both are normalised.

Flink's ``sql-client.sh -f`` on a dumb terminal echoes each statement after its
``Flink SQL>`` prompt, glued to the statement's output, and adds lines about its
history file and shutting down; changeflow's client echoes the statement on a line of
its own. Timings, job ids and colours differ every run, and the reason of an error is
Flink's Java exception (changeflow's error names the same problem in its own words).
:func:`normalise` keeps what both must agree on: the ``[INFO]`` and ``[ERROR]`` lines,
result tables, their footers without the time, and ``Job ID: <id>``.
"""

from __future__ import annotations

import re

_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
_STARTS = ("[INFO]", "[ERROR]", "+-", "|", "Received a total", "Empty set", "Job ID:")
_DROPPED = ("Command history file path", "Shutting down the session", "done.", "rc=")


def normalise(text: str) -> list[str]:
    """The lines of a client's output both clients must print alike."""
    out: list[str] = []
    skip_reason = False
    for raw in _ANSI.sub("", text).replace("\r", "").split("\n"):
        line = raw
        if line.startswith("Flink SQL> "):
            # The prompt and the echoed statement: keep what follows the echo on the same line, if anything.
            found = [line.find(s) for s in _STARTS if line.find(s) > 0]
            line = line[min(found):] if found else ""
        line = line.rstrip()
        if skip_reason:  # the error's reason: every line up to the blank line after it
            if line == "":
                skip_reason = False
            continue
        if not line or line.startswith(_DROPPED):
            continue
        if line.startswith("[ERROR]") and line.endswith("Reason:"):
            skip_reason = True
        line = re.sub(r" \(\d+\.\d+ seconds\)$", "", line)
        line = re.sub(r"^Job ID: [0-9a-f]{32}$", "Job ID: <id>", line)
        if line.startswith(_STARTS) or re.match(r"^\d+ rows? in set$", line):
            out.append(line)
    return out
