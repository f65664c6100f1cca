"""Conformance cases for Python table functions: lateral joins, ``flat_map``, ``map`` and SQL ``LATERAL TABLE``.

Each case is ``build(t_env, E) -> Table`` as in :mod:`conformance.table_cases`; ``E`` also
carries ``udf``, ``udtf``, ``Row``, ``TableFunction``, ``ScalarFunction`` and
``register(t_env, name, function)`` (PyFlink's ``create_temporary_function``; under
changeflow the function catalog), taken from ``pyflink`` (recorder) or ``changeflow``
(tests). This module imports neither.

Goldens recorded by ``conformance/record_flink_lateral.py`` live in ``conformance/goldens/lateral/``.
"""

from __future__ import annotations

from conformance.table_cases import Case

CASES: dict = {}

LINES = [(1, "to be or"), (2, ""), (3, "not to be")]


def case(name: str, mode: str = "streaming", deterministic: bool = True):
    """Register ``build`` as the lateral case ``name`` (as :func:`conformance.table_cases.case`)."""
    def register(build):
        if name in CASES:
            raise ValueError(f"duplicate conformance case {name!r}")
        CASES[name] = Case(name=name, build=build, mode=mode, deterministic=deterministic,
                           description=" ".join((build.__doc__ or "").split()))
        return build
    return register


def _lines(t_env, E):
    return t_env.from_elements(LINES, E.DataTypes.ROW([E.DataTypes.FIELD("id", E.DataTypes.BIGINT()),
                                                       E.DataTypes.FIELD("line", E.DataTypes.STRING())]))


def _split(E):
    @E.udtf(result_types=[E.DataTypes.STRING()])
    def split(line):
        for word in line.split():
            yield word
    return split


def _split_with_length(E):
    @E.udtf(result_types=[E.DataTypes.STRING(), E.DataTypes.INT()])
    def split_len(line):
        for word in line.split():
            yield word, len(word)
    return split_len


@case("join_lateral_call")
def join_lateral_call(t_env, E):
    """join_lateral with a call and one alias: an empty line emits nothing and is dropped."""
    return _lines(t_env, E).join_lateral(_split(E)(E.col("line")).alias("word"))


@case("join_lateral_two_columns_predicate")
def join_lateral_two_columns_predicate(t_env, E):
    """join_lateral of a two-column function with a join predicate (Flink wants an equality across the sides)."""
    return _lines(t_env, E).join_lateral(_split_with_length(E)(E.col("line")).alias("word", "n"),
                                         (E.col("n") == E.col("id")) & (E.col("word") != "x"))


@case("left_outer_join_lateral_call")
def left_outer_join_lateral_call(t_env, E):
    """left_outer_join_lateral: a row the function emits nothing for is kept with NULL."""
    return _lines(t_env, E).left_outer_join_lateral(_split(E)(E.col("line")).alias("word"))


@case("join_lateral_row_function")
def join_lateral_row_function(t_env, E):
    """join_lateral with the function itself: it takes the whole row as a Row."""
    @E.udtf(result_types=[E.DataTypes.BIGINT(), E.DataTypes.STRING()])
    def split_row(row):
        for word in row.line.split():
            yield row.id * 10, word
    return _lines(t_env, E).join_lateral(split_row.alias("n", "word"))


@case("flat_map_word_count")
def flat_map_word_count(t_env, E):
    """The wheel's word count: flat_map of a Row function, alias, group_by count (an updating result)."""
    Row = E.Row  # the function closes over Row only (E is not picklable by value)

    @E.udtf(result_types=[E.DataTypes.STRING()])
    def split(line):
        for s in line[1].split():
            yield Row(s)
    return _lines(t_env, E).flat_map(split).alias("word").group_by(E.col("word")) \
        .select(E.col("word"), E.lit(1).count.alias("cnt"))


@case("flat_map_word_count_batch", mode="batch", deterministic=False)
def flat_map_word_count_batch(t_env, E):
    """The word count in batch mode."""
    return flat_map_word_count(t_env, E)


@case("flat_map_call_two_columns")
def flat_map_call_two_columns(t_env, E):
    """flat_map of a call: only the function's columns, named f0, f1."""
    return _lines(t_env, E).flat_map(_split_with_length(E)(E.col("line")))


@case("map_row_function")
def map_row_function(t_env, E):
    """map of a scalar function taking the Row, with a ROW result expanded into columns."""
    Row = E.Row

    @E.udf(result_type=E.DataTypes.ROW([E.DataTypes.FIELD("id", E.DataTypes.BIGINT()),
                                        E.DataTypes.FIELD("words", E.DataTypes.INT())]))
    def count_words(row):
        return Row(row.id, len(row.line.split()))
    return _lines(t_env, E).map(count_words)


@case("map_call_alias")
def map_call_alias(t_env, E):
    """map of a call, renamed by Table.alias."""
    Row = E.Row

    @E.udf(result_type=E.DataTypes.ROW([E.DataTypes.FIELD("a", E.DataTypes.BIGINT()),
                                        E.DataTypes.FIELD("b", E.DataTypes.BIGINT())]))
    def add(i):
        return Row(i + 1, i * i)
    return _lines(t_env, E).map(add(E.col("id"))).alias("x", "y")


@case("table_function_class_open")
def table_function_class_open(t_env, E):
    """A TableFunction subclass whose open() sets state used by eval."""
    class Repeat(E.TableFunction):
        def open(self, function_context):
            self.times = 2

        def eval(self, line):
            for _ in range(self.times if line else 0):
                yield line.upper()
    repeat = E.udtf(Repeat(), result_types=[E.DataTypes.STRING()])
    return _lines(t_env, E).join_lateral(repeat(E.col("line")).alias("shout")).select(E.col("id"), E.col("shout"))


@case("join_lateral_over_retracting_input")
def join_lateral_over_retracting_input(t_env, E):
    """A table function over an updating input: its rows carry the input row's -U/+U."""
    @E.udtf(result_types=[E.DataTypes.BIGINT()])
    def upto(n):
        for i in range(1, n + 1):
            yield i
    t = t_env.from_elements([("a", 1), ("b", 2), ("a", 1)], ["k", "v"])
    sums = t.group_by(E.col("k")).select(E.col("k"), E.col("v").sum.alias("s"))
    return sums.join_lateral(upto(E.col("s")).alias("i"))


def _sql_env(t_env, E):
    E.register(t_env, "split_len", _split_with_length(E))
    t_env.create_temporary_view("lines", _lines(t_env, E))


@case("sql_lateral_comma")
def sql_lateral_comma(t_env, E):
    """SQL: FROM t, LATERAL TABLE(f(a)) with the function's own column names."""
    _sql_env(t_env, E)
    return t_env.sql_query("SELECT id, f0, f1 FROM lines, LATERAL TABLE(split_len(line))")


@case("sql_cross_join_lateral_alias")
def sql_cross_join_lateral_alias(t_env, E):
    """SQL: CROSS JOIN LATERAL TABLE(f(a)) AS T(x, y) and a WHERE over the function's columns."""
    _sql_env(t_env, E)
    return t_env.sql_query("SELECT id, T.w, T.n FROM lines CROSS JOIN LATERAL TABLE(split_len(line)) AS T(w, n) "
                           "WHERE n > 2")


@case("sql_left_join_lateral")
def sql_left_join_lateral(t_env, E):
    """SQL: LEFT JOIN LATERAL TABLE(f(a)) AS T(x, y) ON TRUE keeps the empty line."""
    _sql_env(t_env, E)
    return t_env.sql_query("SELECT id, w, n FROM lines LEFT JOIN LATERAL TABLE(split_len(line)) AS T(w, n) ON TRUE")


@case("sql_left_join_lateral_batch", mode="batch", deterministic=False)
def sql_left_join_lateral_batch(t_env, E):
    """The LEFT JOIN LATERAL in batch mode."""
    return sql_left_join_lateral(t_env, E)


@case("sql_lateral_over_retracting_input")
def sql_lateral_over_retracting_input(t_env, E):
    """SQL: a table function over a GROUP BY subquery (an updating input)."""
    _sql_env(t_env, E)
    t = t_env.from_elements([("x", "ab"), ("y", "c d"), ("x", "efg h")], ["k", "s"])
    t_env.create_temporary_view("words", t)
    return t_env.sql_query(
        "SELECT k, w, n FROM (SELECT k, MAX(s) AS s FROM words GROUP BY k), "
        "LATERAL TABLE(split_len(s)) AS T(w, n)")


__all__ = ["CASES", "LINES"]
