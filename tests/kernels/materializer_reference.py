"""A straightforward reference model of the sink upsert materializer (a Python list per key)."""

from __future__ import annotations


def reference_changes(records, pk_pos, upsert_pos=None):
    """Flink's SinkUpsertMaterializer over a list of (kind, values): the emitted (kind, values)."""
    hist: dict[tuple, list[tuple]] = {}
    out = []

    def same(a, b):
        if upsert_pos is None:
            return a == b
        return tuple(a[i] for i in upsert_pos) == tuple(b[i] for i in upsert_pos)

    for kind, row in records:
        lst = hist.setdefault(tuple(row[i] for i in pk_pos), [])
        if kind in ("+I", "+U"):
            was_empty = not lst
            at = next((i for i, r in enumerate(lst) if same(r, row)), None) if upsert_pos is not None else None
            if at is None:
                lst.append(row)
            else:
                lst[at] = row
            out.append(("+I" if was_empty else "+U", row))
        else:
            at = next((i for i, r in enumerate(lst) if same(r, row)), None)
            if at is None:
                continue
            del lst[at]
            if not lst:
                out.append(("-D", row))
            elif at == len(lst):
                out.append(("+U", lst[-1]))
    return out


def upsert_materialize(changes, pk_pos):
    """Apply an upsert stream (+I/+U upsert, -D delete by primary key): {pk: row}."""
    table = {}
    for kind, row in changes:
        pk = tuple(row[i] for i in pk_pos)
        if kind == "-D":
            table.pop(pk, None)
        else:
            table[pk] = row
    return table
