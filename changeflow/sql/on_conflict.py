"""``INSERT INTO t SELECT ... ON CONFLICT DO DEDUPLICATE | DO NOTHING | DO ERROR`` (Flink 2.3).

The clause ends an ``INSERT``: Flink's grammar is ``INSERT INTO t [(columns)]
query ON CONFLICT conflict_action`` with the actions ``DO NOTHING``, ``DO ERROR``
and ``DO DEDUPLICATE`` and no conflict target (the sink's primary key is the
target). The statement layer cuts it off the query's tokens with
:func:`split_on_conflict` before the query is planned, so the query planner
never sees it; :func:`reject_on_conflict` names it, with its position, where
it cannot stand (in a plain query, a view, a subquery, before the query).

>>> from changeflow.sql.ddl import Cursor, tokenize
>>> sql = "INSERT INTO snk SELECT a, b FROM t ON CONFLICT DO NOTHING"
>>> cur = Cursor(sql, tokenize(sql), 3)
>>> stop, mode = split_on_conflict(cur)
>>> mode, cur.text(3, stop)
('NOTHING', 'SELECT a, b FROM t')
"""

from __future__ import annotations

from sqlglot.tokenizer_core import Token, TokenType

from changeflow.sql.ddl import Cursor, DdlError, position

ACTIONS = ("DEDUPLICATE", "NOTHING", "ERROR")


def _clause_starts(tokens: list[Token], start: int, stop: int) -> list[tuple[int, int]]:
    """(index, parenthesis depth) of every ``ON CONFLICT`` clause in ``tokens[start:stop]``.

    ``CONFLICT`` may also be a column a join condition starts with (``ON conflict = x``):
    only ``ON CONFLICT`` followed by ``DO``, an action, a ``(`` or nothing is the clause.
    """
    found, depth = [], 0
    for j in range(start, stop):
        kind = tokens[j].token_type
        depth += kind == TokenType.L_PAREN
        depth -= kind == TokenType.R_PAREN
        if _is_word(tokens[j], "ON") and j + 1 < stop and _is_word(tokens[j + 1], "CONFLICT"):
            after = tokens[j + 2] if j + 2 < stop else None
            if after is None or after.token_type == TokenType.L_PAREN or \
                    any(_is_word(after, w) for w in ("DO",) + ACTIONS):
                found.append((j, depth))
    return found


def _is_word(token: Token, word: str) -> bool:
    return token.token_type not in (TokenType.STRING, TokenType.IDENTIFIER) and token.text.upper() == word


def split_on_conflict(cur: Cursor) -> tuple[int, str | None]:
    """Where the query at the cursor ends, and the ``ON CONFLICT`` action that follows it (or None).

    Fails, naming the construct and its position, for a clause inside the
    query, a conflict target (``ON CONFLICT (k)``), an unknown action, or text
    after the action.
    """
    starts = _clause_starts(cur.tokens, cur.i, cur.stop)
    if not starts:
        return cur.stop, None
    j, depth = starts[0]
    if depth != 0 or len(starts) > 1:
        inner = starts[0] if depth != 0 else starts[1]
        _fail(cur, inner[0], "ON CONFLICT must end the INSERT statement (after the whole query), not stand "
                             "inside the query")
    clause = Cursor(cur.sql, cur.tokens, j + 2, cur.stop)
    if clause.word() == "(":
        clause.fail("ON CONFLICT takes no conflict target in Flink SQL (the sink's primary key is the target); "
                    "write ON CONFLICT DO DEDUPLICATE, DO NOTHING or DO ERROR")
    if not clause.accept("DO"):
        clause.fail("expected DO after ON CONFLICT (ON CONFLICT DO DEDUPLICATE, DO NOTHING or DO ERROR)")
    action = clause.word()
    if action not in ACTIONS:
        clause.fail(f"unknown ON CONFLICT action {(p.text if (p := clause.peek()) else '')!r}; expected "
                    f"DO DEDUPLICATE, DO NOTHING or DO ERROR")
    clause.next()
    if not clause.at_end():
        clause.fail("unexpected text after the ON CONFLICT clause, which ends the INSERT statement")
    return j, action


def reject_on_conflict(sql: str, tokens: list[Token], where: str) -> None:
    """Fail if ``ON CONFLICT`` appears in ``tokens``, which are not an INSERT's query (``where`` says what)."""
    starts = _clause_starts(tokens, 0, len(tokens))
    if starts:
        token = tokens[starts[0][0]]
        raise DdlError(f"SQL parse failed: ON CONFLICT is a clause of INSERT INTO ... SELECT and cannot stand in "
                       f"{where} at {position(sql, token)} ({token.text!r})")


def _fail(cur: Cursor, index: int, message: str):
    Cursor(cur.sql, cur.tokens, index, cur.stop).fail(message)


__all__ = ["ACTIONS", "reject_on_conflict", "split_on_conflict"]
