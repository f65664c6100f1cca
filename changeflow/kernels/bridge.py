"""Where the two encodings meet: Table change rows <-> DataStream records, one Arrow batch at a time.

A Table plan's changes are typed columns plus ``_kind``/``_seq``/``_sub``
(:mod:`changeflow.kernels.changelog`); a DataStream's records are a pickled
``_value`` plus the same ``_seq``/``_sub`` order stamp (:mod:`changeflow.kernels.keyed.records`).
:class:`ChangesToRecords` and :class:`RecordsToChanges` convert a batch either
way; the Spark runtime runs them in ``mapInArrow`` (:mod:`changeflow.runtime.spark.bridge`).

Order. A record's stamp is a ``(_seq, _sub)`` pair (:mod:`changeflow.kernels.order`), so a
record becomes a change with its stamp's two columns as they are, and a change ``(_seq, _sub)`` becomes the
``_sub``-th output of record ``_seq`` of a source numbered ``source``
(:func:`~changeflow.kernels.order.change_stamp`; its limits are in :mod:`changeflow.kernels.order`).

Row kinds. ``_kind`` is the one carrier of a change's kind on both sides
(:mod:`changeflow.kernels.keyed.records`): a change's ``_kind`` becomes its
record's ``_kind`` unchanged, and a record's ``_kind`` its change's, so the
conversions only (un)pickle the payload columns. (A ``to_retract_stream`` or
``to_append_stream`` record is the function ``form`` of the Row: its ``_kind`` is
that value's own, ``+I`` for the retract stream's tuple.)
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass
from typing import Any, Iterator

import pyarrow as pa

from changeflow.common.row import Row
from changeflow.common.row_kind import RowKind
from changeflow.common.time import Instant
from changeflow.kernels.changelog import CONTROL, KIND, SEQ, SUB
from changeflow.kernels.keyed.records import VALUE, decode, dumps, kind_of, loads
from changeflow.kernels.order import change_stamp

_KINDS = list(RowKind)


@dataclass(frozen=True)
class RecordShape:
    """How a DataStream record becomes a table row: ``atomic`` (the value is column ``f0``) or
    ``fields`` (a Row or tuple, field ``positions[i]`` is column ``i``)."""

    kind: str
    positions: tuple[int, ...] = ()

    def values(self, record: Any) -> tuple:
        if self.kind == "atomic":
            return (record,)
        try:
            return tuple(record[p] for p in self.positions)
        except (TypeError, IndexError) as error:
            raise ValueError(f"record {record!r} does not have the fields {list(self.positions)} "
                             f"of the stream's declared type: {error}") from None


class RecordsToChanges:
    """DataStream records (``_value``, bookkeeping) -> typed change rows (columns, ``_kind``, ``_seq``, ``_sub``).

    ``schema`` is the Arrow schema of the output (columns then bookkeeping);
    ``changelog`` is False for ``from_data_stream`` (every record must be an
    INSERT, as Flink checks) and True for ``from_changelog_stream`` (a record's
    ``_kind``, its Row's kind, is the change's). ``with_kind`` False leaves out
    ``_kind`` and ``_sub`` (a batch frame has only ``_seq``).
    """

    def __init__(self, shape: RecordShape, schema: pa.Schema, changelog: bool, name: str,
                 with_kind: bool = True) -> None:
        self.shape, self.schema, self.changelog, self.name, self.with_kind = shape, schema, changelog, name, with_kind

    def __call__(self, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        names = [f.name for f in self.schema if f.name not in (KIND, SEQ, SUB)]
        for batch in batches:
            kinds = batch.column(KIND)
            if not self.changelog:
                self._check_inserts(batch)
            # Control rows (a DataStream's end of input, read by an event-time Table query) pass as they are,
            # with null values, as every operator passes them (runtime/spark/control_rows.py).
            nulls = (None,) * len(names)
            rows = [nulls if kind >= CONTROL else self.shape.values(loads(blob))
                    for blob, kind in zip(batch.column(VALUE).to_pylist(), kinds.to_pylist(), strict=True)]
            arrays = []
            for i, name in enumerate(names):
                field = self.schema.field(name)
                column = [r[i] for r in rows]
                if pa.types.is_timestamp(field.type):
                    column = [_instant_datetime(v) if isinstance(v, Instant) else v for v in column]
                try:
                    arrays.append(pa.array(column, type=field.type))
                except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError) as error:
                    bad = next((v for v in column if not _fits(v, field.type)), None)
                    raise ValueError(f"{self.name}: column {name} of type {field.type} cannot hold "
                                     f"the value {bad!r}: {error}") from None
            if self.with_kind:
                arrays.append(kinds)  # the record's _kind is the change's, as it is
            arrays.append(batch.column(SEQ))  # the record's stamp is the change's, as it is
            if self.with_kind:
                arrays.append(batch.column(SUB))
            yield pa.RecordBatch.from_arrays(arrays, schema=self.schema)

    def _check_inserts(self, batch: pa.RecordBatch) -> None:
        """``from_data_stream`` takes only INSERT records: the first other one is refused, named, as Flink does."""
        i = _first_not_insert(batch.column(KIND))
        if i is not None:
            kind = _KINDS[batch.column(KIND)[i].as_py()]
            record = decode(batch.column(VALUE)[i].as_py(), kind.value)
            raise ValueError(f"{self.name}: Error during input conversion. Conversion expects insert-only "
                             f"records but DataStream API record contains: {kind.name} (record {record!r})")


class ChangesToRecords:
    """Typed change rows -> DataStream records (``_value``, bookkeeping) of a DataStream source numbered ``source``.

    ``form`` says what each change becomes: ``row`` (a :class:`Row` named by
    ``names`` with the change's RowKind) or a function of the positional Row
    with its kind (``to_append_stream``, ``to_retract_stream``). ``insert_only``
    refuses any change that is not an INSERT, naming the conversion.
    """

    def __init__(self, names: list[str], source: int, form: Any = "row", insert_only: bool = False,
                 name: str = "to_data_stream") -> None:
        self.names, self.source, self.form, self.insert_only, self.name = names, source, form, insert_only, name

    def __call__(self, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            columns = [batch.column(n).to_pylist() for n in self.names]
            count = batch.num_rows
            # A batch job's changes are all inserts and have no _kind column.
            kinds = batch.column(KIND) if KIND in batch.schema.names else pa.array([0] * count, pa.int8())
            subs = batch.column(SUB).to_pylist() if SUB in batch.schema.names else [0] * count
            seqs = batch.column(SEQ).to_pylist()
            if self.insert_only:
                self._check_inserts(kinds)
            stamps = [change_stamp(seqs[i], subs[i], self.source) for i in range(count)]
            rows = [Row.of(_KINDS[k], [c[i] for c in columns], self.names) for i, k in enumerate(kinds.to_pylist())]
            if self.form == "row":  # the change's _kind is the record's, unchanged
                values, record_kinds = [dumps(row) for row in rows], kinds
            else:  # the form's value of the positional Row, and that value's own kind
                records = [self.form(Row.of(row.get_row_kind(), tuple(row), None)) for row in rows]
                values = [dumps(r) for r in records]
                record_kinds = pa.array([kind_of(r) for r in records], pa.int8())
            yield pa.RecordBatch.from_arrays([pa.array(values, pa.binary()), record_kinds.cast(pa.int8()),
                                              pa.array([s[0] for s in stamps], pa.int64()),
                                              pa.array([s[1] for s in stamps], pa.int64())],
                                             names=[VALUE, KIND, SEQ, SUB])

    def _check_inserts(self, kinds: pa.Array) -> None:
        i = _first_not_insert(kinds)
        if i is not None:
            kind = _KINDS[kinds[i].as_py()]
            raise ValueError(f"{self.name}: the table emitted a {kind.name} change; "
                             "only an insert-only table converts this way")


def _first_not_insert(kinds: pa.Array) -> int | None:
    """The position of the first ``_kind`` that is not ``+I``, or None."""
    values = kinds.to_numpy(zero_copy_only=False)
    others = ((values != RowKind.INSERT.value) & (values < CONTROL)).nonzero()[0]
    return int(others[0]) if len(others) else None


def _instant_datetime(instant: Instant) -> datetime.datetime:
    """A ``Types.INSTANT()`` value as the UTC datetime Arrow takes (to the microsecond, as Spark holds it)."""
    micros = instant.seconds * 1_000_000 + instant.nanos // 1000
    return _EPOCH + datetime.timedelta(microseconds=micros)


_EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)


def _fits(value: Any, arrow_type: pa.DataType) -> bool:
    try:
        pa.array([value], type=arrow_type)
        return True
    except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError):
        return False
