"""``CREATE TABLE``: Flink's DDL parsed on sqlglot's tokens.

sqlglot's parsers do not know Flink's table elements (``WATERMARK FOR``,
``PRIMARY KEY ... NOT ENFORCED``, ``pt AS PROCTIME()``) or its ``WITH``
options, so this module reads the statement's tokens itself: it splits the
parenthesised element list at top-level commas and reads each element, then
the options. Expressions (computed columns, the watermark) are kept as SQL
text: a computed column is planned as a projection over the connector's
columns when the table is read.

>>> table, if_not_exists = parse_create_table(
...     "CREATE TABLE t (id INT, v DECIMAL(10, 2), pt AS PROCTIME(), PRIMARY KEY (id) NOT ENFORCED) "
...     "WITH ('connector' = 'datagen')")
>>> [(r[0], r[1], r[2], r[3]) for r in table.schema.describe_rows()]
[('id', 'INT', False, 'PRI(id)'), ('v', 'DECIMAL(10, 2)', True, None), ('pt', 'TIMESTAMP_LTZ(3) *PROCTIME*', False,
None)]
>>> table.options
{'connector': 'datagen'}
"""

from __future__ import annotations

import re
import sqlglot
from sqlglot.dialects.spark import Spark
from sqlglot.errors import SqlglotError, TokenError
from sqlglot.tokenizer_core import Token, TokenType

from changeflow.catalog import PROCTIME_TYPE, CatalogTable, DeclaredColumn, DeclaredSchema, Watermark, join_path
from changeflow.common.types import DataType, DataTypes
from changeflow.plan.type_inference import PlanError
from changeflow.sql.type_names import parse_type


class DdlError(PlanError):
    """A DDL statement that cannot be parsed or is not valid; names the construct and its position."""


class _StatementTokenizer(Spark.Tokenizer):
    # sqlglot reads the rest of a SHOW or EXPLAIN as one opaque string; statements need its words.
    COMMANDS: set = set()


def tokenize(sql: str) -> list[Token]:
    """sqlglot tokens of a Flink statement (backquoted identifiers, ``''`` escapes in strings)."""
    try:
        tokens = _StatementTokenizer().tokenize(sql)
    except TokenError as e:
        raise DdlError(f"cannot read the statement: {e}") from None
    merged: list[Token] = []
    for t in tokens:
        # 'it''s' arrives as two adjacent string tokens; Flink reads one string with a quote.
        if (merged and t.token_type == TokenType.STRING and merged[-1].token_type == TokenType.STRING
                and merged[-1].end + 1 == t.start):
            prev = merged.pop()
            t = Token(TokenType.STRING, prev.text + "'" + t.text, prev.line, prev.col, prev.start, t.end)
        if t.token_type not in (TokenType.STRING, TokenType.IDENTIFIER) and " " in t.text.strip():
            # Keyword phrases ("PRIMARY KEY", "NOT NULL") arrive as one token: read them word by word.
            for m in re.finditer(r"\S+", t.text):
                start = t.start + m.start()
                merged.append(Token(TokenType.VAR, m.group(), t.line, t.col, start, start + len(m.group()) - 1))
            continue
        merged.append(t)
    return merged


def position(sql: str, token: Token) -> str:
    """``line L, column C`` of a token, as Flink's messages give it."""
    line = sql.count("\n", 0, token.start) + 1
    column = token.start - (sql.rfind("\n", 0, token.start) + 1) + 1
    return f"line {line}, column {column}"


class Cursor:
    """A position in a statement's tokens with the few look-ahead helpers DDL needs."""

    def __init__(self, sql: str, tokens: list[Token], start: int = 0, stop: int | None = None) -> None:
        self.sql = sql
        self.tokens = tokens
        self.i = start
        self.stop = len(tokens) if stop is None else stop

    def at_end(self) -> bool:
        return self.i >= self.stop

    def peek(self, offset: int = 0) -> Token | None:
        j = self.i + offset
        return self.tokens[j] if j < self.stop else None

    def word(self, offset: int = 0) -> str:
        t = self.peek(offset)
        return t.text.upper() if t is not None and t.token_type not in (TokenType.STRING, TokenType.IDENTIFIER) else ""

    def accept(self, *words: str) -> bool:
        if all(self.word(k) == w for k, w in enumerate(words)):
            self.i += len(words)
            return True
        return False

    def expect(self, *words: str) -> None:
        if not self.accept(*words):
            self.fail(f"expected {' '.join(words)}")

    def next(self) -> Token:
        t = self.peek()
        if t is None:
            self.fail("unexpected end of statement")
        self.i += 1
        return t

    def name(self) -> str:
        """An identifier: backquoted (any text), or a plain word."""
        t = self.next()
        if t.token_type != TokenType.IDENTIFIER and not re.fullmatch(r"[A-Za-z_$][\w$]*", t.text):
            self.i -= 1
            self.fail("expected a name")
        return t.text

    def qualified_name(self) -> str:
        """``[[catalog.]database.]name`` as one path string (:func:`changeflow.catalog.join_path`)."""
        return join_path(self.name_parts())

    def name_parts(self) -> list[str]:
        """The parts of a dotted identifier at the cursor."""
        parts = [self.name()]
        while (t := self.peek()) is not None and t.token_type == TokenType.DOT:
            self.i += 1
            parts.append(self.name())
        return parts

    def name_list(self) -> list[str]:
        """``(a, b, ...)``: the names in the parentheses at the cursor, which moves past them."""
        close = self.balanced_end()
        self.i += 1
        names = []
        while self.i < close:
            names.append(self.name())
            if self.i < close:
                self.expect(",")
        self.i = close + 1
        return names

    def string(self) -> str:
        t = self.next()
        if t.token_type != TokenType.STRING:
            self.i -= 1
            self.fail("expected a string literal")
        return t.text

    def balanced_end(self) -> int:
        """Index of the ``)`` closing the ``(`` at the cursor."""
        depth = 0
        for j in range(self.i, self.stop):
            kind = self.tokens[j].token_type
            depth += kind == TokenType.L_PAREN
            depth -= kind == TokenType.R_PAREN
            if depth == 0:
                return j
        self.fail("unbalanced parentheses")

    def text(self, start: int, stop: int) -> str:
        """The statement's original text of tokens ``[start, stop)``."""
        return self.sql[self.tokens[start].start:self.tokens[stop - 1].end + 1]

    def fail(self, message: str):
        t = self.peek()
        where = f"at {position(self.sql, t)} ({t.text!r})" if t is not None else "at the end of the statement"
        raise DdlError(f"SQL parse failed: {message} {where}")


# --- CREATE TABLE ----------------------------------------------------------------------


def parse_create_table(sql: str, tokens: list[Token] | None = None) -> tuple[CatalogTable, bool]:
    """The table a ``CREATE [TEMPORARY] TABLE [IF NOT EXISTS]`` statement declares, and its IF NOT EXISTS."""
    cur = Cursor(sql, tokens if tokens is not None else tokenize(sql))
    cur.expect("CREATE")
    temporary = cur.accept("TEMPORARY")
    cur.expect("TABLE")
    if_not_exists = cur.accept("IF", "NOT", "EXISTS")
    name = cur.qualified_name()
    if cur.word() != "(":
        cur.fail("expected the column list")
    close = cur.balanced_end()
    schema = _table_elements(cur, cur.i + 1, close)
    cur.i = close + 1
    comment = cur.string() if cur.accept("COMMENT") else None
    partition_keys: tuple[str, ...] = ()
    if cur.accept("PARTITIONED"):
        partition_keys = _partition_keys(cur, schema)
    if cur.word() == "LIKE":
        cur.fail("CREATE TABLE ... LIKE is not supported")
    options: dict[str, str] = {}
    if cur.accept("WITH"):
        options = parse_options(cur)
    if not cur.at_end():
        cur.fail("unexpected text after the table definition")
    return CatalogTable(name, schema, options, temporary, comment, partition_keys=partition_keys), if_not_exists


def _partition_keys(cur: Cursor, schema: DeclaredSchema) -> tuple[str, ...]:
    """``BY (col, ...)`` after PARTITIONED: physical columns of the table, each once (Flink's checks)."""
    cur.expect("BY")
    if cur.word() != "(":
        cur.fail("expected ( after PARTITIONED BY")
    close = cur.balanced_end()
    keys: list[str] = []
    for start, stop in _split_commas(cur, cur.i + 1, close):
        if stop - start != 1:
            cur.i = start
            cur.fail("expected a column name in PARTITIONED BY")
        token = cur.tokens[start]
        keys.append(token.text)
    cur.i = close + 1
    physical = [c.name for c in schema.physical_columns()]
    for key in keys:
        if key not in physical:
            raise DdlError(f"Partition column '{key}' not defined in the table schema. Available columns: "
                           f"[{', '.join(repr(n) for n in physical)}]")
    if len(set(keys)) != len(keys):
        raise DdlError(f"Partition keys must be unique: {', '.join(keys)}")
    return tuple(keys)


def parse_options(cur: Cursor) -> dict[str, str]:
    """``('key' = 'value', ...)``; a repeated key is an error."""
    if cur.word() != "(":
        cur.fail("expected ( after WITH")
    close = cur.balanced_end()
    cur.i += 1
    options: dict[str, str] = {}
    while cur.i < close:
        key_token = cur.peek()
        key = cur.string()
        assert key_token is not None  # string() has just read it
        cur.expect("=")
        value = cur.string()
        if key in options:
            cur.i -= 3
            raise DdlError(f"option {key!r} is given twice at {position(cur.sql, key_token)}")
        options[key] = value
        if cur.i < close:
            cur.expect(",")
    cur.i = close + 1
    return options


def _split_commas(cur: Cursor, start: int, stop: int) -> list[tuple[int, int]]:
    parts, depth, begin = [], 0, start
    for j in range(start, stop):
        kind = cur.tokens[j].token_type
        depth += kind in (TokenType.L_PAREN, TokenType.LT)
        depth -= kind in (TokenType.R_PAREN, TokenType.GT)
        if kind == TokenType.COMMA and depth == 0:
            parts.append((begin, j))
            begin = j + 1
    parts.append((begin, stop))
    return parts


def _table_elements(cur: Cursor, start: int, stop: int) -> DeclaredSchema:
    columns: list[DeclaredColumn] = []
    primary_key: tuple[str, ...] = ()
    watermark: Watermark | None = None
    for begin, end in _split_commas(cur, start, stop):
        element = Cursor(cur.sql, cur.tokens, begin, end)
        if element.at_end():
            element.fail("empty table element")
        if element.word() in ("PRIMARY", "CONSTRAINT"):
            if primary_key:
                element.fail("a table has at most one PRIMARY KEY")
            primary_key = _primary_key(element)
        elif element.word() == "WATERMARK":
            if watermark is not None:
                element.fail("a table has at most one WATERMARK")
            watermark = _watermark(element)
        else:
            column = _column(element)
            if any(c.name == column.name for c in columns):
                raise DdlError(f"A regular Column named '{column.name}' already exists in the table.")
            columns.append(column)
    names = [c.name for c in columns]
    for key in primary_key:
        if key not in names:
            raise DdlError(f"Primary key column '{key}' is not defined in the schema")
    if watermark is not None:
        if watermark.column not in names:
            raise DdlError(f"The rowtime attribute field '{watermark.column}' is not defined in the table schema. "
                           f"Available fields: {names}")
        rowtime = columns[names.index(watermark.column)]
        # A computed column's type is known once it is planned: table_plan checks it then.
        if rowtime.expression is None:
            check_rowtime_type(rowtime.data_type)
    # A primary key's columns are NOT NULL (Flink's DESCRIBE shows null = FALSE).
    columns = [DeclaredColumn(c.name, c.data_type.with_nullable(False), c.type_text, c.expression,
                              c.display_expression, c.proctime) if c.name in primary_key else c for c in columns]
    return DeclaredSchema(tuple(columns), primary_key, watermark)


def check_rowtime_type(data_type: DataType) -> None:
    """Fail, with Flink's message, unless ``data_type`` can be a watermark's time column."""
    if data_type.root not in ("TIMESTAMP", "TIMESTAMP_LTZ"):
        raise DdlError(f"Invalid data type of time field for watermark definition. The field must be of type "
                       f"TIMESTAMP(p) or TIMESTAMP_LTZ(p), the supported precision 'p' is from 0 to 3, "
                       f"but the time field type is {data_type}")


def _primary_key(cur: Cursor) -> tuple[str, ...]:
    if cur.accept("CONSTRAINT"):
        cur.name()
    cur.expect("PRIMARY", "KEY")
    if cur.word() != "(":
        cur.fail("expected the key columns")
    keys = cur.name_list()
    if not cur.accept("NOT", "ENFORCED"):
        raise DdlError("Flink doesn't support ENFORCED mode for PRIMARY KEY constraint. ENFORCED/NOT ENFORCED "
                       "controls if the constraint checks are performed on the incoming/outgoing data. Flink does "
                       "not own the data therefore the only supported mode is the NOT ENFORCED mode")
    if not cur.at_end():
        cur.fail("unexpected text after PRIMARY KEY")
    return tuple(keys)


def _watermark(cur: Cursor) -> Watermark:
    cur.expect("WATERMARK", "FOR")
    column = cur.name()
    cur.expect("AS")
    if cur.at_end():
        cur.fail("expected the watermark expression")
    text = cur.text(cur.i, cur.stop)
    return Watermark(column, text, display_expression(text))


def _column(cur: Cursor) -> DeclaredColumn:
    name = cur.name()
    if cur.accept("AS"):
        if cur.at_end():
            cur.fail("expected the computed column's expression")
        text = cur.text(cur.i, cur.stop)
        if re.fullmatch(r"PROCTIME\s*\(\s*\)", text, re.IGNORECASE):
            return DeclaredColumn(name, PROCTIME_TYPE, "TIMESTAMP_LTZ(3)", "PROCTIME()", "PROCTIME()", True)
        # The type is the expression's, known once it is planned (see sql/statements.py).
        return DeclaredColumn(name, DataTypes.STRING(), "", text, display_expression(text))
    type_end = cur.i
    while type_end < cur.stop and cur.tokens[type_end].text.upper() not in ("NOT", "NULL", "COMMENT", "METADATA"):
        type_end += 1
    if type_end == cur.i:
        cur.fail(f"expected the type of column {name!r}")
    type_text = cur.text(cur.i, type_end)
    data_type, display = parse_type(type_text, name)
    cur.i = type_end
    if cur.accept("NOT", "NULL"):
        data_type = data_type.with_nullable(False)
    else:
        cur.accept("NULL")
    metadata, virtual = None, False
    if cur.accept("METADATA"):  # read from the connector's metadata (Kafka: offset, partition, ...)
        metadata = cur.string() if cur.accept("FROM") else name
        virtual = cur.accept("VIRTUAL")
    comment = cur.string() if cur.accept("COMMENT") else None
    if not cur.at_end():
        cur.fail(f"unexpected text in the definition of column {name!r}")
    return DeclaredColumn(name, data_type, display, metadata=metadata, virtual=virtual, comment=comment)


def display_expression(text: str) -> str:
    """An expression as Flink prints it in DESCRIBE: identifiers backquoted (``ts - INTERVAL ...``)."""
    try:
        return sqlglot.parse_one(text, read="spark").sql(dialect="spark", identify=True)
    except SqlglotError:
        return text
