"""PostgreSQL's ``pgoutput`` logical replication messages (protocol version 1), decoded into transactions.

``pg_logical_slot_peek_binary_changes(slot, ..., 'proto_version', '1', 'publication_names', p)``
returns one message a row: ``B`` (begin: commit LSN, time, xid), ``R`` (a relation's
schema: namespace, name, replica identity, columns with type OIDs), ``I``/``U``/``D``
(a row inserted, updated, deleted: tuples of column values in text form), ``T``
(truncate), ``C`` (commit: commit LSN and end LSN), and others the source ignores
(``Y`` type, ``O`` origin, ``M`` message). :func:`transactions` groups them into
committed transactions in commit order; values stay raw (bytes of the text form,
None for NULL, :data:`UNCHANGED` for a TOASTed value the update did not change).

An update carries its old row (``O``) only when the table has REPLICA IDENTITY
FULL; with DEFAULT or USING INDEX it carries the old key (``K``) only when the key
changed, and a delete carries only the key.

>>> import struct
>>> def s(text): return text.encode() + b"\\0"
>>> begin = b"B" + struct.pack(">qqi", 200, 0, 7)
>>> relation = (b"R" + struct.pack(">i", 16) + s("public") + s("t") + b"f" + struct.pack(">h", 1)
...             + b"\\1" + s("id") + struct.pack(">ii", 23, -1))
>>> insert = b"I" + struct.pack(">i", 16) + b"N" + struct.pack(">h", 1) + b"t" + struct.pack(">i", 1) + b"5"
>>> commit = b"C\\0" + struct.pack(">qqq", 200, 240, 0)
>>> [(t.xid, t.commit_lsn, t.end_lsn, [(c.op, c.relation.name, c.new) for c in t.changes])
...  for t in transactions([begin, relation, insert, commit])]
[(7, 200, 240, [('I', 't', [b'5'])])]
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field
from typing import Iterable, Iterator

UNCHANGED = object()  # a TOASTed value an update left as it was (pgoutput's 'u')


class ProtocolError(RuntimeError):
    """A pgoutput message changeflow cannot read."""


@dataclass(frozen=True)
class Relation:
    """A table as pgoutput describes it; ``identity`` is its REPLICA IDENTITY (d, n, f, i)."""

    oid: int
    namespace: str
    name: str
    identity: str
    columns: tuple[tuple[str, int], ...]  # (name, type OID)


@dataclass
class Change:
    """One row change: ``op`` I, U or D; ``old`` is the before-image (None when the message has none)."""

    op: str
    relation: Relation
    old: list | None
    new: list | None
    old_is_key: bool = False  # the before-image holds the replica identity's key columns only


@dataclass
class Transaction:
    xid: int
    commit_lsn: int
    end_lsn: int = 0
    changes: list[Change] = field(default_factory=list)
    truncated: list[Relation] = field(default_factory=list)


class _Reader:
    def __init__(self, data: bytes) -> None:
        self.data, self.at = data, 0

    def many(self, fmt: str) -> tuple:
        values = struct.unpack_from(fmt, self.data, self.at)
        self.at += struct.calcsize(fmt)
        return values

    def one(self, fmt: str) -> int:
        return self.many(fmt)[0]

    def byte(self) -> str:
        self.at += 1
        return chr(self.data[self.at - 1])

    def string(self) -> str:
        end = self.data.index(b"\0", self.at)
        text = self.data[self.at:end].decode()
        self.at = end + 1
        return text

    def tuple(self) -> list:
        # Byte arithmetic rather than struct: this loop runs for every value of every change.
        data, at = self.data, self.at
        count = int.from_bytes(data[at:at + 2], "big")
        at += 2
        values: list = []
        for _ in range(count):
            kind = data[at]
            at += 1
            if kind == 0x74 or kind == 0x62:  # 't' (text) or 'b' (binary): a length and the bytes
                length = int.from_bytes(data[at:at + 4], "big")
                values.append(data[at + 4:at + 4 + length])
                at += 4 + length
            elif kind == 0x6E:  # 'n'
                values.append(None)
            elif kind == 0x75:  # 'u'
                values.append(UNCHANGED)
            else:
                raise ProtocolError(f"unknown pgoutput column kind {chr(kind)!r}")
        self.at = at
        return values


def transactions(messages: Iterable[bytes], values: bool = True) -> Iterator[Transaction]:
    """The committed transactions of a stream of pgoutput messages, in commit order.

    Relation messages are remembered across transactions: pgoutput sends a
    relation's schema once per decoding session, before its first change.
    Without ``values`` a change's tuples are not read (``old``/``new`` None): enough to count rows."""
    relations: dict[int, Relation] = {}
    current: Transaction | None = None
    for data in messages:
        r = _Reader(bytes(data))
        tag = r.byte()
        if tag == "B":
            final_lsn, _, xid = r.many(">qqi")
            current = Transaction(xid & 0xFFFFFFFF, final_lsn)
        elif tag == "R":
            oid = r.one(">i")
            namespace, name, identity = r.string(), r.string(), r.byte()
            columns = []
            for _ in range(r.one(">h")):
                r.byte()  # flags: part of the key
                column = r.string()
                type_oid, _ = r.many(">ii")
                columns.append((column, type_oid & 0xFFFFFFFF))
            relations[oid] = Relation(oid, namespace or "pg_catalog", name, identity, tuple(columns))
        elif tag in ("I", "U", "D"):
            if current is None:
                raise ProtocolError(f"pgoutput change {tag!r} outside a transaction")
            relation = relations[r.one(">i")]
            if not values:
                current.changes.append(Change(tag, relation, None, None))
                continue
            if tag == "I":
                r.byte()  # 'N'
                current.changes.append(Change("I", relation, None, r.tuple()))
                continue
            marker = r.byte()
            old, key_only = None, False
            if marker in ("K", "O"):
                old, key_only = r.tuple(), marker == "K"
                marker = r.byte() if tag == "U" else marker
            new = r.tuple() if tag == "U" else None
            current.changes.append(Change(tag, relation, old, new, key_only))
        elif tag == "T":
            if current is None:
                raise ProtocolError("pgoutput truncate outside a transaction")
            count, _ = r.many(">ib")
            oids = [r.one(">i") for _ in range(count)]
            current.truncated.extend(relations[o] for o in oids if o in relations)
        elif tag == "C":
            if current is None:
                raise ProtocolError("pgoutput commit outside a transaction")
            _, commit_lsn, end_lsn, _ = r.many(">bqqq")
            current.commit_lsn, current.end_lsn = commit_lsn, end_lsn
            yield current
            current = None
        # 'Y' (type), 'O' (origin), 'M' (logical message): nothing a table's changes need


def lsn_text(lsn: int) -> str:
    """An LSN as PostgreSQL writes it.

    >>> lsn_text(0x1529140), lsn_int("0/1529140")
    ('0/1529140', 22188352)
    """
    return f"{lsn >> 32:X}/{lsn & 0xFFFFFFFF:X}"


def lsn_int(text: str) -> int:
    high, _, low = text.partition("/")
    return (int(high, 16) << 32) | int(low, 16)
