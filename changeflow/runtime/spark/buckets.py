"""Hash buckets of grouping keys, spread evenly over Spark's shuffle partitions.

A stateful operator groups its input by a hash *bucket* of the key, and Spark
places each bucket on shuffle partition ``pmod(murmur3(bucket, 42), P)``. With
the buckets numbered ``0..B-1`` that placement is a lottery: 8 buckets over 2
partitions landed 3 and 5 in the keyed-aggregation benchmark, and one core sat
idle for a third of every micro-batch.

So bucket ``b`` is carried under an *id* chosen so that Spark's hash of the id
is congruent to ``b`` modulo ``B``. Whenever ``P`` divides ``B`` the partition
is then ``b mod P``: every partition gets exactly ``B / P`` buckets. The ids
depend on ``B`` alone, which is fixed for a checkpoint's lifetime (its state is
stored under them), never on ``P``.
"""

from __future__ import annotations

from functools import lru_cache

_SEED = 42  # the seed of Spark's HashPartitioning (and of F.hash)
_MASK = 0xFFFFFFFF


@lru_cache(maxsize=None)
def bucket_ids(buckets: int) -> tuple[int, ...]:
    """The id of each bucket: the smallest ``v >= 0`` whose Spark hash is congruent to it mod ``buckets``.

    >>> ids = bucket_ids(8)
    >>> sorted(spark_partition(v, 2) for v in ids), sorted(spark_partition(v, 4) for v in ids)
    ([0, 0, 0, 0, 1, 1, 1, 1], [0, 0, 1, 1, 2, 2, 3, 3])
    """
    ids: dict[int, int] = {}
    v = 0
    while len(ids) < buckets:
        ids.setdefault(spark_partition(v, buckets), v)
        v += 1
    return tuple(ids[b] for b in range(buckets))


def spark_partition(value: int, partitions: int) -> int:
    """The shuffle partition Spark's hash partitioning gives a LONG grouping value."""
    return _murmur3_long(value) % partitions  # Python's % is already a non-negative pmod


def _murmur3_long(value: int) -> int:
    """Spark's ``Murmur3_x86_32.hashLong(value, 42)`` as a signed 32-bit int."""
    h1 = _SEED
    for word in (value & _MASK, (value >> 32) & _MASK):
        k1 = (word * 0xCC9E2D51) & _MASK
        k1 = _rotl(k1, 15)
        k1 = (k1 * 0x1B873593) & _MASK
        h1 ^= k1
        h1 = _rotl(h1, 13)
        h1 = (h1 * 5 + 0xE6546B64) & _MASK
    h1 ^= 8  # the input length in bytes
    h1 ^= h1 >> 16
    h1 = (h1 * 0x85EBCA6B) & _MASK
    h1 ^= h1 >> 13
    h1 = (h1 * 0xC2B2AE35) & _MASK
    h1 ^= h1 >> 16
    return h1 - (1 << 32) if h1 & 0x80000000 else h1


def _rotl(x: int, r: int) -> int:
    return ((x << r) | (x >> (32 - r))) & _MASK
