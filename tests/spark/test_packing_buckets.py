"""Packed transport into stateful operators, and the layout of hash buckets over shuffle partitions."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from changeflow.runtime.spark import packing
from changeflow.runtime.spark.buckets import _murmur3_long, bucket_ids, spark_partition
from changeflow.runtime.spark.packing import BUCKET, PAYLOAD, bucket_index, pack, unpack


def frame():
    return pd.DataFrame({
        "k": np.array(["a", None, "b", "a", "c", None], dtype=object),
        "x": pd.array([1, None, 2**62, -3, None, 7], dtype="Int64"),
        "d": [0.5, np.nan, -0.0, 1.0, 2.0, 3.0],
        "_kind": np.zeros(6, dtype=np.int8), "_seq": np.arange(6, dtype=np.int64),
        "_sub": np.zeros(6, dtype=np.int64),
    })


def test_packing_keeps_rows_and_dtypes_exactly():
    original = frame()
    packed = pack(original, ["k"], 4)
    assert list(packed.columns) == [BUCKET, PAYLOAD] and len(packed) <= 4
    restored = unpack(packed[PAYLOAD]).sort_values("_seq").reset_index(drop=True)
    pd.testing.assert_frame_equal(restored, original)


def test_a_key_has_one_bucket_whatever_its_partition():
    original = frame()
    whole = dict(zip(original["_seq"], bucket_index(original, ["k"], 8), strict=True))
    for part in (original.iloc[[0, 2, 4]], original.iloc[[5, 3, 1]]):
        assert dict(zip(part["_seq"], bucket_index(part.reset_index(drop=True), ["k"], 8), strict=True)) == {
            s: whole[s] for s in part["_seq"]}
    assert bucket_index(pd.DataFrame({"d": [0.0, -0.0]}), ["d"], 8).tolist() == [
        bucket_index(pd.DataFrame({"d": [0.0]}), ["d"], 8)[0]] * 2


def test_large_buckets_are_split_into_several_payloads(monkeypatch):
    monkeypatch.setattr(packing, "_ROWS_PER_PAYLOAD", 2)
    packed = pack(frame(), [], 4)  # no keys: one bucket
    assert len(packed) == 3 and packed[BUCKET].nunique() == 1
    assert len(unpack(packed[PAYLOAD])) == 6


@pytest.mark.parametrize("partitions", [1, 2, 4, 8])
def test_bucket_ids_spread_evenly_when_partitions_divide_buckets(partitions):
    counts = np.bincount([spark_partition(v, partitions) for v in bucket_ids(8)], minlength=partitions)
    assert counts.tolist() == [8 // partitions] * partitions


@pytest.mark.spark
def test_bucket_hash_is_sparks_partitioning_hash(spark):
    from pyspark.sql import functions as F

    values = [0, 1, 7, 42, -1, -123456789, 2**40 + 5, -(2**63), 2**63 - 1] + list(bucket_ids(8))
    rows = spark.createDataFrame([(v,) for v in values], "v long").select("v", F.hash("v").alias("h")).collect()
    assert [(r.v, _murmur3_long(r.v)) for r in rows] == [(r.v, r.h) for r in rows]
