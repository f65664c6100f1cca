"""PyFlink's own examples run under changeflow with only their imports changed, and print what PyFlink 2.3 prints.

The examples come from the ``apache-flink`` 2.3.0 wheel the set-up downloads into
``.venv/pyflink-wheel`` (not installed); Flink's output for each is a golden
recorded by ``conformance/record_pyflink_examples.py``. Each example runs in this
process on the shared SparkSession (``runpy``, as ``__main__``), its standard
output captured. The examples changeflow cannot run yet are listed, with the
reason, in ``conformance/pyflink_examples.py`` (``NOT_RUN``); the test checks the
list and the wheel agree, so a new example is noticed.
"""

from __future__ import annotations

import contextlib
import io
import os
import runpy
import sys

import pytest

from conformance.pyflink_examples import (EXAMPLES, FAILED, GOLDENS, NOT_RUN, comparable, example_sources, ported,
                                          program_args, written)

WHEEL_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), ".venv",
                         "pyflink-wheel")


@pytest.fixture(scope="module")
def sources():
    if not os.path.isdir(WHEEL_DIR):
        pytest.fail(f"PyFlink's wheel is not in {WHEEL_DIR}: run ./setup.sh (it downloads it)")
    return example_sources(WHEEL_DIR)


def test_every_example_of_the_wheel_is_run_or_listed_with_a_reason(sources):
    run = {path for path, _ in EXAMPLES.values()}
    assert set(sources) == run | set(NOT_RUN), "an example of the wheel is neither run nor listed in NOT_RUN"
    assert not run & set(NOT_RUN)


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_example_prints_what_pyflink_prints(name, sources, spark, tmp_path, monkeypatch):
    path, how = EXAMPLES[name]
    golden = os.path.join(GOLDENS, f"{name}.txt")
    with open(golden) as f:
        expected = f.read()
    program = tmp_path / os.path.basename(path)
    program.write_text(ported(sources[path]))
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "argv", [str(program), *program_args(name)])
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        if expected.rstrip().endswith(FAILED):   # PyFlink's own example fails: so must the port, at the same point
            with pytest.raises(Exception):  # noqa: B017 - Flink's error is a Java one; any error is the point
                runpy.run_path(str(program), run_name="__main__")
            expected = expected.rstrip()[:-len(FAILED)]
        else:
            runpy.run_path(str(program), run_name="__main__")
    assert comparable(out.getvalue() + written(str(tmp_path)), how) == comparable(expected, how)
