"""Flink's memory sizes ("64 mb", "1g", "512"): parsed to and written from a number of bytes."""

from __future__ import annotations

import re

_LONG_MAX = 2**63 - 1  # Flink's MemorySize holds a Java long

# As Flink's MemorySize.parse reads them: units are powers of 1024.
_MEMORY_UNITS: dict[str, tuple[tuple[str, ...], int]] = {
    "BYTES": (("b", "bytes"), 1),
    "KILO_BYTES": (("k", "kb", "kibibytes"), 1 << 10),
    "MEGA_BYTES": (("m", "mb", "mebibytes"), 1 << 20),
    "GIGA_BYTES": (("g", "gb", "gibibytes"), 1 << 30),
    "TERA_BYTES": (("t", "tb", "tebibytes"), 1 << 40),
}
_BYTES_BY_LABEL = {label: size for labels, size in _MEMORY_UNITS.values() for label in labels}
_MEMORY_UNITS_TEXT = ", ".join(
    f"{name}: ({' | '.join(labels)})" for name, (labels, _) in _MEMORY_UNITS.items()
)


def parse_memory_size(text: str) -> int:
    """Parse a Flink memory size (``"64 mb"``, ``"1g"``, ``"512"``) to a number of bytes.

    Units are powers of 1024 and case-insensitive; no unit means bytes.

    >>> parse_memory_size("64 kb")
    65536
    """
    trimmed = text.strip()
    leading = re.match(r"[0-9]*", trimmed)
    assert leading is not None  # the pattern matches any text (possibly with no digits)
    number = leading.group()
    label = trimmed[len(number) :].strip().lower()
    problem = None
    if not number:
        problem = "it does not start with a number"
    elif label and label not in _BYTES_BY_LABEL:
        problem = f"unit {label!r} is not a known memory unit"
    if problem:
        raise ValueError(
            f"Cannot parse memory size {text!r}: {problem}. Expected a whole number followed "
            f"by an optional unit (no unit means bytes); accepted units (case-insensitive): "
            f"{_MEMORY_UNITS_TEXT}"
        )
    size = int(number) * _BYTES_BY_LABEL.get(label, 1)
    if size > _LONG_MAX:
        raise ValueError(f"Cannot parse memory size {text!r}: it exceeds {_LONG_MAX} bytes")
    return size


def format_memory_size(size: int) -> str:
    """Write a byte count in the largest unit that holds it exactly, as Flink does.

    >>> format_memory_size(65536), format_memory_size(1000)
    ('64 kb', '1000 bytes')
    """
    for labels, unit in reversed(_MEMORY_UNITS.values()):
        if size % unit == 0 and size:
            return f"{size // unit} {labels[1]}"
    return f"{size} bytes"
