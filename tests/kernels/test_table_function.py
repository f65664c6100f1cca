"""The table function kernel (kernels/udf/table_function.py) over pandas changelog batches, without Spark."""

from __future__ import annotations

import pandas as pd
import pytest

from changeflow.common import DataTypes, Row
from changeflow.functions import FunctionContext, ScalarFunction, TableFunction, UserFunction
from changeflow.kernels.changelog import DELETE, INSERT, UPDATE_AFTER, UPDATE_BEFORE, sort_changes
from changeflow.kernels.keyed.records import UserFunctionError
from changeflow.kernels.udf.table_function import ROWS_PER_INPUT, TableFunctionRunner, python_values

STRING, BIGINT = DataTypes.STRING(), DataTypes.BIGINT()


def _function(instance, *fields, kind="table"):
    return UserFunction("f", kind, instance, DataTypes.ROW([DataTypes.FIELD(n, t) for n, t in fields]))


class Split(TableFunction):
    def eval(self, s):
        yield from s.split()


def _batch(lines, kinds=None, seqs=None, subs=None):
    n = len(lines)
    return pd.DataFrame({"line": lines, "_arg0": lines, "_kind": kinds or [INSERT] * n,
                         "_seq": seqs or list(range(n)), "_sub": subs or [0] * n})


def _runner(instance=None, outer=False, keep_input=True, **kwargs):
    runner = TableFunctionRunner(_function(instance or Split(), ("word", STRING)), ["_arg0"], [STRING], ["word"],
                                 outer=outer, keep_input=keep_input, **kwargs)
    runner.open()
    return runner


def test_rows_are_joined_to_their_input_row_and_keep_its_kind():
    out = _runner().process(_batch(["a b", "c"], kinds=[UPDATE_BEFORE, DELETE]))
    assert out[["line", "word", "_kind"]].values.tolist() == [
        ["a b", "a", UPDATE_BEFORE], ["a b", "b", UPDATE_BEFORE], ["c", "c", DELETE]]
    assert "_arg0" not in out.columns


def test_child_stamps_keep_the_emitted_order_of_rows_with_one_source_position():
    # Two input rows with the same _seq (an -U/+U pair of one source row): all children of the
    # first sort before the children of the second, in the order the function emitted them.
    batch = _batch(["x y z", "p q"], kinds=[UPDATE_BEFORE, UPDATE_AFTER], seqs=[7, 7], subs=[1, 2])
    out = sort_changes(_runner().process(batch).sample(frac=1, random_state=3))
    assert out["word"].tolist() == ["x", "y", "z", "p", "q"]
    assert out["_sub"].tolist() == [ROWS_PER_INPUT, ROWS_PER_INPUT + 1, ROWS_PER_INPUT + 2,
                                    2 * ROWS_PER_INPUT, 2 * ROWS_PER_INPUT + 1]


def test_inner_drops_a_row_without_output_and_left_pads_it_with_null():
    assert _runner().process(_batch(["", "a"]))["line"].tolist() == ["a"]
    out = _runner(outer=True).process(_batch(["", "a"]))
    assert out[["line", "word"]].values.tolist() == [["", None], ["a", "a"]]


def test_without_input_columns_only_the_function_columns_and_bookkeeping():
    out = _runner(keep_input=False).process(_batch(["a b"]))
    assert list(out.columns) == ["_kind", "_seq", "_sub", "word"]


def test_a_batch_frame_without_sub_passes_seq_through():
    batch = pd.DataFrame({"line": ["a b"], "_arg0": ["a b"], "_seq": [4]})
    out = _runner().process(batch)
    assert out[["word", "_seq"]].values.tolist() == [["a", 4], ["b", 4]]


def test_a_row_taking_function_gets_a_named_row():
    seen = []

    class Whole(TableFunction):
        def eval(self, row):
            seen.append(row)
            yield row.line.upper()

    batch = pd.DataFrame({"id": [1.0, float("nan")], "line": ["a", None], "_arg0": [1.0, float("nan")],
                          "_arg1": ["a", None], "_seq": [0, 1]})
    runner = TableFunctionRunner(_function(Whole(), ("u", STRING)), ["_arg0", "_arg1"], [BIGINT, STRING], ["u"],
                                 row_names=["id", "line"])
    runner.open()
    with pytest.raises(UserFunctionError, match=r"user function f failed on input Row\(id=None, line=None\)"):
        runner.process(batch)
    assert seen[0] == Row(id=1, line="a") and isinstance(seen[0][0], int)


def test_results_as_tuples_rows_lists_or_lone_values():
    class Many(TableFunction):
        def eval(self, s):
            return [(s, 1), Row(s, 2), [s, 3]]

    runner = TableFunctionRunner(_function(Many(), ("w", STRING), ("n", BIGINT)), ["_arg0"], [STRING], ["w", "n"])
    runner.open()
    assert runner.process(_batch(["a"]))[["w", "n"]].values.tolist() == [["a", 1], ["a", 2], ["a", 3]]

    class Lone(TableFunction):
        def eval(self, s):
            return s  # one value: one row (a string is not iterated)

    assert _runner(Lone()).process(_batch(["ab"]))["word"].tolist() == ["ab"]


def test_a_row_of_the_wrong_width_names_the_function_and_input():
    class Wrong(TableFunction):
        def eval(self, s):
            yield s, 1, 2

    runner = TableFunctionRunner(_function(Wrong(), ("w", STRING), ("n", BIGINT)), ["_arg0"], [STRING], ["w", "n"])
    runner.open()
    with pytest.raises(UserFunctionError, match=r"f failed on input \('a',\): ValueError: expected a row of 2"):
        runner.process(_batch(["a"]))


def test_a_failing_eval_names_the_function_and_the_input_row():
    class Boom(TableFunction):
        def eval(self, s):
            raise KeyError(s)

    with pytest.raises(UserFunctionError, match=r"user function f failed on input \('x',\): KeyError: 'x'"):
        _runner(Boom()).process(_batch(["x"]))


def test_open_gets_a_context_and_close_runs_once_and_failures_in_open_are_named():
    events = []

    class Tracked(TableFunction):
        def open(self, function_context):
            events.append(("open", function_context.get_job_parameter("k", "default")))

        def eval(self, s):
            yield s

        def close(self):
            events.append("close")

    runner = TableFunctionRunner(_function(Tracked(), ("w", STRING)), ["_arg0"], [STRING], ["w"])
    runner.open(FunctionContext({"k": "v"}))
    runner.close()
    runner.close()
    assert events == [("open", "v"), "close"]

    class BadOpen(TableFunction):
        def open(self, function_context):
            raise RuntimeError("no model")

        def eval(self, s):
            yield s

    with pytest.raises(UserFunctionError, match=r"user function f failed in open\(\): RuntimeError: no model"):
        TableFunctionRunner(_function(BadOpen(), ("w", STRING)), ["_arg0"], [STRING], ["w"]).open()


def test_a_scalar_function_gives_one_row_per_input_row_and_null_for_a_null_result():
    class Pair(ScalarFunction):
        def eval(self, s):
            return None if s == "" else Row(s, len(s))

    f = _function(Pair(), ("w", STRING), ("n", BIGINT), kind="scalar")
    runner = TableFunctionRunner(f, ["_arg0"], [STRING], ["w", "n"], keep_input=False)
    runner.open()
    out = runner.process(_batch(["ab", ""]))
    assert out[["w", "n"]].values.tolist() == [["ab", 2], [None, None]]


def test_python_values_give_python_ints_and_none():
    assert python_values(pd.Series([1.0, None, 3.0]), BIGINT) == [1, None, 3]
    assert python_values(pd.Series([True, None], dtype=object), DataTypes.BOOLEAN()) == [True, None]
    assert python_values(pd.Series([[1, 2], None], dtype=object), DataTypes.ARRAY(BIGINT)) == [[1, 2], None]
