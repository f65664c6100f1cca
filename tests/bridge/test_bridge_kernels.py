"""The Table <-> DataStream row conversions (changeflow.kernels.bridge), without Spark."""

from __future__ import annotations

import pyarrow as pa
import pytest

from changeflow.common.row import Row
from changeflow.common.row_kind import RowKind
from changeflow.kernels.bridge import ChangesToRecords, RecordShape, RecordsToChanges
from changeflow.kernels.changelog import KIND, SEQ, SUB
from changeflow.kernels.keyed.records import VALUE, encode, loads, values_of
from changeflow.kernels.order import change_stamp, child_stamp, source_stamp, stamp_seq, stamp_sub


def _changes(rows):
    """A change batch of (kind, seq, sub, k, v) tuples."""
    kinds, seqs, subs, ks, vs = zip(*rows, strict=True)
    return pa.RecordBatch.from_arrays([pa.array(ks, pa.string()), pa.array(vs, pa.int64()),
                                       pa.array(kinds, pa.int8()), pa.array(seqs, pa.int64()),
                                       pa.array(subs, pa.int64())], names=["k", "v", KIND, SEQ, SUB])


def test_change_stamps_sort_as_seq_then_sub():
    pairs = [(0, 0), (0, 1), (0, 5), (0, 2**33), (1, 0), (2, 3), (2, 2**62)]
    stamps = [change_stamp(seq, sub, 3) for seq, sub in pairs]
    assert sorted(stamps) == stamps
    assert [stamp_seq(s) for s in stamps] == [seq for seq, _ in pairs]


def test_stamp_sub_keeps_source_and_two_fan_outs_in_order():
    a = source_stamp(7, 0)
    ordered = [a, child_stamp(a, 0), child_stamp(child_stamp(a, 0), 0), child_stamp(child_stamp(a, 0), 9),
               child_stamp(a, 1), child_stamp(a, 70000), source_stamp(7, 1), source_stamp(7, 300)]
    subs = [stamp_sub(s) for s in ordered]
    assert subs == sorted(subs)
    assert len(set(subs[:-1])) == len(subs) - 1  # distinct up to the limits (source 300 saturates at 255)
    assert max(subs) < 2**41  # room for the Table kernels' _sub * 4 + i at eleven levels


def test_a_table_stamp_round_trips_through_records():
    """A change (seq, sub) read back from its record stamp keeps its order (to_changelog_stream -> from_...)."""
    pairs = [(0, 0), (0, 1), (1, 0), (1, 1), (1, 2)]
    back = [(stamp_seq(change_stamp(s, u, 0)), stamp_sub(change_stamp(s, u, 0))) for s, u in pairs]
    assert back == sorted(back) and len(set(back)) == len(back)


def test_changes_to_records_named_rows_with_kinds():
    batch = _changes([(0, 0, 0, "a", 1), (1, 1, 0, "a", 1), (2, 1, 1, "a", 3), (3, 2, 0, "b", 2)])
    out = list(ChangesToRecords(["k", "v"], source=0)([batch]))[0]
    rows = [loads(v) for v in out.column(VALUE).to_pylist()]
    assert [str(r.get_row_kind()) for r in rows] == ["+I", "-U", "+U", "-D"]
    assert out.column(KIND).to_pylist() == [0, 1, 2, 3]  # the change's _kind is the record's, unchanged
    assert values_of(out.to_pandas()) == rows
    assert rows[2] == Row("a", 3) and rows[2].as_dict() == {"k": "a", "v": 3}
    stamps = list(zip(out.column(SEQ).to_pylist(), out.column(SUB).to_pylist(), strict=True))
    assert sorted(stamps) == stamps


def test_changes_to_records_insert_only_refuses_an_update():
    batch = _changes([(0, 0, 0, "a", 1), (2, 1, 0, "a", 2)])
    with pytest.raises(ValueError, match="to_data_stream: the table emitted a UPDATE_AFTER change"):
        list(ChangesToRecords(["k", "v"], source=0, insert_only=True)([batch]))


def _records(values):
    """A record batch of ``values``, each record's ``_kind`` its value's RowKind (as every kernel writes it)."""
    stamps = [source_stamp(i, 0) for i in range(len(values))]
    blobs, kinds = encode(values)
    return pa.RecordBatch.from_arrays([pa.array(blobs, pa.binary()), pa.array(kinds, pa.int8()),
                                       pa.array([s[0] for s in stamps], pa.int64()),
                                       pa.array([s[1] for s in stamps], pa.int64())], names=[VALUE, KIND, SEQ, SUB])


_SCHEMA = pa.schema([("w", pa.string()), ("n", pa.int32()), (KIND, pa.int8()), (SEQ, pa.int64()),
                     (SUB, pa.int64())])


def test_records_to_changes_takes_the_row_kinds_of_a_changelog():
    rows = [Row.of_kind(RowKind.INSERT, "a", 1), Row.of_kind(RowKind.UPDATE_BEFORE, "a", 1),
            Row.of_kind(RowKind.UPDATE_AFTER, "a", 2), Row.of_kind(RowKind.DELETE, "a", 2)]
    out = list(RecordsToChanges(RecordShape("fields", (0, 1)), _SCHEMA, True, "t")([_records(rows)]))[0]
    assert out.column(KIND).to_pylist() == [0, 1, 2, 3]
    assert out.column("n").to_pylist() == [1, 1, 2, 2]
    assert out.column(SEQ).to_pylist() == [0, 1, 2, 3]


def test_records_to_changes_insert_only_refuses_another_kind():
    rows = [Row("a", 1), Row.of_kind(RowKind.DELETE, "a", 1)]
    with pytest.raises(ValueError, match="Conversion expects insert-only records but DataStream API record "
                                         "contains: DELETE"):
        list(RecordsToChanges(RecordShape("fields", (0, 1)), _SCHEMA, False, "t")([_records(rows)]))


def test_records_to_changes_names_a_value_its_column_cannot_hold():
    with pytest.raises(ValueError, match=r"column n of type int32 cannot hold the value 'x'"):
        list(RecordsToChanges(RecordShape("fields", (0, 1)), _SCHEMA, False, "t")([_records([("a", "x")])]))


def test_atomic_and_picked_fields():
    assert RecordShape("atomic").values(5) == (5,)
    assert RecordShape("fields", (1, 0)).values(("a", 1)) == (1, "a")
    with pytest.raises(ValueError, match="does not have the fields"):
        RecordShape("fields", (0, 1)).values(("a",))


def test_a_records_kind_is_its_kind_column_both_ways():
    """``_kind`` is the one carrier: the bridge reads it, not the pickled Row's kind, and writes it as it was."""
    batch = _records([Row("a", 1), Row("a", 2)])
    batch = batch.set_column(1, KIND, pa.array([1, 2], pa.int8()))  # -U, +U: the values were pickled as +I
    out = list(RecordsToChanges(RecordShape("fields", (0, 1)), _SCHEMA, True, "t")([batch]))[0]
    assert out.column(KIND).to_pylist() == [1, 2]
    back = list(ChangesToRecords(["w", "n"], source=0)([out]))[0]
    assert back.column(KIND).to_pylist() == [1, 2]
    assert [str(r.get_row_kind()) for r in values_of(back.to_pandas())] == ["-U", "+U"]
