"""The ``datagen`` connector: generated rows, as Flink's.

Per field, ``fields.<f>.kind`` is ``random`` (the default: ``min``/``max`` for
numbers, ``length`` for strings, ``max-past`` for timestamps, ``null-rate``) or
``sequence`` (``start`` and ``end``, both required; the source ends when a
sequence is exhausted). ``number-of-rows`` bounds the source; without it and
without a sequence the source is unbounded and emits ``rows-per-second`` rows
per second (a bounded source is not throttled as Flink throttles it). Row ``i``
is a function of ``i`` alone: a sequence gives ``start + i``; random values come
from a generator seeded by the block of :data:`BLOCK` rows that holds ``i``. So
any range of rows can be generated anywhere, in any pieces, with the same values
(timestamps and dates excepted: they are relative to now). Spark generates a
bounded source on its executors, a partition or a micro-batch at a time (never
the whole source in one place); a resumed job generates the rows after its
checkpointed offset.

>>> from changeflow.sql.ddl import parse_create_table
>>> table, _ = parse_create_table("CREATE TABLE t (id INT, s STRING) WITH ('connector' = 'datagen', "
...     "'fields.id.kind' = 'sequence', 'fields.id.start' = '1', 'fields.id.end' = '3', 'fields.s.length' = '2')")
>>> source = DataGenSource(table, streaming=True)
>>> source.row_count, [r[0] for r in source.rows()], len(source.rows()[0][1])
(3, [1, 2, 3], 2)
"""

from __future__ import annotations

import datetime
import decimal

import numpy as np

from changeflow.catalog import CatalogTable
from changeflow.connectors.generated_rows import GeneratedRows
from changeflow.connectors.options import ConnectorError, check_keys, failure, integer, number

BLOCK = 4096  # rows generated from one seeded random generator (row i is in block i // BLOCK)
_SEED = 0x5EED  # mixed with the block number: the blocks' generators are independent streams

_INTEGRAL_BITS = {"TINYINT": 8, "SMALLINT": 16, "INT": 32, "BIGINT": 64}
_FLOAT_LIMITS = {"FLOAT": (1.4e-45, 3.4028235e38), "DOUBLE": (4.9e-324, 1.7976931348623157e308)}


def _field_options(root: str, kind: str) -> set[str]:
    if kind == "sequence":
        return {"kind", "start", "end", "null-rate"}
    if root in _INTEGRAL_BITS or root in _FLOAT_LIMITS or root == "DECIMAL":
        return {"kind", "min", "max", "null-rate"}
    if root in ("STRING", "VARCHAR", "CHAR"):
        return {"kind", "length", "var-len", "null-rate"}
    if root == "TIMESTAMP":
        return {"kind", "max-past", "null-rate"}
    if root == "ARRAY":
        return {"kind", "length", "null-rate"}
    return {"kind", "null-rate"}


class _Field:
    def __init__(self, table: CatalogTable, name: str, data_type, streaming: bool) -> None:
        self.name, self.type = name, data_type
        key = f"fields.{name}."
        self.kind = table.options.get(key + "kind", "random")
        if self.kind not in ("random", "sequence"):
            raise failure(table, False, f"Unsupported generator kind: {self.kind}")
        self.null_rate = number(table, False, key + "null-rate") or 0.0
        root = data_type.root
        if self.kind == "sequence":
            if root not in _INTEGRAL_BITS and root not in _FLOAT_LIMITS and root not in ("DECIMAL", "STRING",
                                                                                           "VARCHAR", "CHAR"):
                raise failure(table, False, f"Unsupported type {data_type} for the sequence generator of "
                                            f"field '{name}'")
            for bound in ("start", "end"):
                if key + bound not in table.options:
                    raise failure(table, False, f"Could not find required property '{key}{bound}' for sequence "
                                                "generator.")
            start, end = integer(table, False, key + "start"), integer(table, False, key + "end")
            assert start is not None and end is not None  # both present: checked above
            self.start, self.end = start, end
            if self.end < self.start:
                raise failure(table, False, f"'{key}end' ({self.end}) is less than '{key}start' ({self.start})")
            return
        if root in _INTEGRAL_BITS:
            half = 1 << (_INTEGRAL_BITS[root] - 1)
            self.min = integer(table, False, key + "min", -half)
            self.max = integer(table, False, key + "max", half - 1)
        elif root in _FLOAT_LIMITS or root == "DECIMAL":
            if root == "DECIMAL":
                digits = 10.0 ** (data_type.params[0] - data_type.params[1])
                low, high = 1 - digits, digits - 1
            else:
                low, high = _FLOAT_LIMITS[root]
            found_min, found_max = number(table, False, key + "min"), number(table, False, key + "max")
            self.min = low if found_min is None else found_min
            self.max = high if found_max is None else found_max
        self.length = integer(table, False, key + "length", 100)
        self.max_past_ms = integer(table, False, key + "max-past", 0)
        if (root in _INTEGRAL_BITS or root in _FLOAT_LIMITS or root == "DECIMAL") and self.min > self.max:
            raise failure(table, False, f"'{key}min' ({self.min}) is greater than '{key}max' ({self.max})")

    @property
    def size(self) -> int | None:
        return self.end - self.start + 1 if self.kind == "sequence" else None

    def values(self, start: int, count: int, rng: np.random.Generator) -> list:
        root = self.type.root
        if self.kind == "sequence":
            values = [self.start + i for i in range(start, start + count)]
            if root in _FLOAT_LIMITS:
                values = [float(v) for v in values]
            elif root == "DECIMAL":
                values = [decimal.Decimal(v).quantize(decimal.Decimal(1).scaleb(-self.type.params[1])) for v in values]
            elif root in ("STRING", "VARCHAR", "CHAR"):
                values = [str(v) for v in values]
        elif root in _INTEGRAL_BITS:
            low, high = int(self.min), int(self.max)  # integers: both set from integer options
            values = [int(v) for v in rng.integers(low, high, size=count, endpoint=True, dtype=np.int64)]
        elif root in _FLOAT_LIMITS:
            values = [float(v) for v in rng.uniform(self.min, self.max, size=count)]
        elif root == "DECIMAL":
            scale = decimal.Decimal(1).scaleb(-self.type.params[1])
            values = [decimal.Decimal(float(v)).quantize(scale) for v in rng.uniform(self.min, self.max, size=count)]
        elif root in ("STRING", "VARCHAR", "CHAR"):
            # Hex digits, built as one fixed-width byte array (a Python join per row costs 10 µs).
            codes = np.frombuffer(b"0123456789abcdef", dtype=np.uint8)[rng.integers(0, 16, size=(count, self.length))]
            values = (np.ascontiguousarray(codes).view(f"S{self.length}").ravel().astype(f"U{self.length}").tolist()
                      if self.length > 0 else [""] * count)
        elif root == "BOOLEAN":
            values = [bool(v) for v in rng.integers(0, 2, size=count)]
        elif root == "TIMESTAMP":
            now = datetime.datetime.now(datetime.timezone.utc).replace(tzinfo=None)
            values = [now - datetime.timedelta(milliseconds=int(v))
                      for v in rng.integers(0, self.max_past_ms, size=count, endpoint=True)]
        elif root == "DATE":
            values = [datetime.date.today()] * count
        else:
            raise ConnectorError(f"datagen cannot generate values of type {self.type} (field '{self.name}')")
        if self.null_rate > 0:
            nulls = rng.random(count) < self.null_rate
            values = [None if n else v for v, n in zip(values, nulls, strict=True)]
        return values


class DataGenSource(GeneratedRows):
    """Generated rows; ``row_count`` is ``None`` for an unbounded source."""

    connector = "datagen"

    def __init__(self, table: CatalogTable, streaming: bool) -> None:
        columns = table.schema.physical_columns()
        supported = {"connector", "rows-per-second", "number-of-rows", "scan.parallelism"}
        for c in columns:
            kind = table.options.get(f"fields.{c.name}.kind", "random")
            supported |= {f"fields.{c.name}.{o}" for o in _field_options(c.data_type.root, kind)}
        check_keys(table, False, "datagen", supported)
        self.fields = [_Field(table, c.name, c.data_type, streaming) for c in columns]
        self.rows_per_second = integer(table, False, "rows-per-second", 10000)
        if self.rows_per_second <= 0:
            raise failure(table, False, f"'rows-per-second' must be positive, got {self.rows_per_second}")
        limits = [f.size for f in self.fields if f.size is not None]
        number_of_rows = integer(table, False, "number-of-rows")
        if number_of_rows is not None:
            if number_of_rows < 0:
                raise failure(table, False, f"'number-of-rows' must not be negative, got {number_of_rows}")
            limits.append(number_of_rows)
        self.row_count = min(limits) if limits else None
        if self.row_count is None and not streaming:
            raise ConnectorError(f"Querying an unbounded table '{table.name}' in batch mode is not allowed. The table "
                                 "source is unbounded: set 'number-of-rows' or a sequence field to bound it.")
        self.table = table

    def columns(self, start: int, count: int) -> list[list]:
        """The values of rows ``start .. start + count - 1``, one list per field (``None`` for null).

        Generated block by block (:data:`BLOCK` rows, each from its own seeded
        generator), so the values of a row do not depend on how the range is cut.
        """
        columns: list[list] = [[] for _ in self.fields]
        end = start + count
        block = start // BLOCK
        while block * BLOCK < end:
            first = block * BLOCK
            rng = np.random.default_rng([_SEED, block])
            cut = slice(max(start, first) - first, min(end, first + BLOCK) - first)
            for column, f in zip(columns, self.fields, strict=True):
                column.extend(f.values(first, BLOCK, rng)[cut])
            block += 1
        return columns

    def generate(self, start: int, count: int) -> list[tuple]:
        """Rows ``start .. start + count - 1``."""
        columns = self.columns(start, count)
        return list(zip(*columns, strict=True)) if columns else [()] * count

    def rows(self) -> list[tuple]:
        """Every row of a bounded source, in memory (small sources; Spark generates by range instead)."""
        return self.generate(0, self.total_rows)
