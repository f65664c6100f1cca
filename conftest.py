"""Test markers for the whole run (tests/ and the doctests in changeflow/), and a guard that keeps a JVM out
of every test that is not marked ``spark``.

It sits at the repository root, not in tests/, because pytest only applies a conftest's hooks to the items
under its directory, and the doctests in changeflow/ need the same marking and the same guard.

- A test that requests the ``spark`` fixture (tests/conftest.py's shared SparkSession), directly or
  through other fixtures, is marked ``spark``; one that requests ``cluster`` (tests/cluster) is marked
  ``cluster``. A ``cluster`` test runs on Spark too, so it is marked ``spark`` as well:
  ``pytest -m "not spark"`` is then the run that needs no Java.
- Doctests that start Spark are listed in ``SPARK_DOCTESTS`` (they request no fixture).
- A test that is not marked ``spark`` fails if it launches Spark's JVM (pyspark's gateway), with a message
  naming the marker it lacks, so a Spark test cannot hide in the fast run.
- A test that requests a server fixture started once per test process (``kafka_broker``, ``postgres``) is put
  in that server's ``xdist_group``: one test process runs them all, so a run starts one broker and one
  PostgreSQL, not one in each process (a broker is a JVM and seconds of start-up).
- In the test processes of pytest-xdist (``-n 2``), the Spark tests run first, the cluster test first of
  them, and the fast tests last: each process takes the next test when it is free, so a run that ends on
  tests of milliseconds ends in both processes at about the same time (a long Spark test near the end
  of the run kept one process busy while the other had finished).
"""

from __future__ import annotations

import pytest

# Doctests (module-qualified names as pytest shows them) that start a SparkSession.
SPARK_DOCTESTS: frozenset[str] = frozenset()

# Session fixtures that start a server in each test process that asks for one: their tests share a group.
SERVER_FIXTURES: tuple[str, ...] = ("kafka_broker", "postgres")


# A wrapper: the markers are set before every other plugin's hook (-m selects by them, pytest-xdist reads
# the groups), the tests are renamed by group and sorted after them (-k and --deselect see the plain ids).
@pytest.hookimpl(wrapper=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]):
    for item in items:
        fixtures = set(getattr(item, "fixturenames", ()))  # the closure: fixtures of fixtures too
        for server in SERVER_FIXTURES:
            if server in fixtures:
                item.add_marker(pytest.mark.xdist_group(server))
        if "cluster" in fixtures:
            item.add_marker(pytest.mark.cluster)
        if "spark" in fixtures or item.name in SPARK_DOCTESTS:
            item.add_marker(pytest.mark.spark)
        if item.get_closest_marker("cluster") is not None and item.get_closest_marker("spark") is None:
            item.add_marker(pytest.mark.spark)
    result = yield
    if getattr(config.option, "loadgroup", False):  # an xdist test process under --dist loadgroup
        for item in items:
            _name_by_group(item)
    if hasattr(config, "workerinput"):  # an xdist test process: every one sorts its collection the same way
        items.sort(key=_run_order)  # stable: a module's tests stay together, in their order
    return result


def _name_by_group(item: pytest.Item) -> None:
    """Append ``@<group>`` to the test's id, as pytest-xdist's ``--dist loadgroup`` does to group tests.

    pytest-xdist (3.8) renames a grouped test by writing ``item._nodeid``, where pytest 8 kept the id;
    pytest 9 keeps it in ``item._id``, so xdist's renaming has no effect and the tests of a group were
    spread over both processes, each running the group's module fixture (the DataStream conformance
    job ran twice). Where xdist's renaming works (pytest 8) the id already ends with the group: left alone.
    """
    groups = sorted({str(m.args[0] if m.args else m.kwargs.get("name", "default"))
                     for m in item.iter_markers("xdist_group")})
    suffix = f"@{'_'.join(groups)}"
    if groups and hasattr(item, "_id") and not item.nodeid.endswith(suffix):
        item._id = type(item._id).parse(item.nodeid + suffix)


def _run_order(item: pytest.Item) -> int:
    """The cluster test (a child run of minutes) first, then the other Spark tests, then the fast ones."""
    if item.get_closest_marker("cluster") is not None:
        return 0
    return 1 if item.get_closest_marker("spark") is not None else 2


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None):
    """Run a test not marked ``spark`` with pyspark's JVM launch replaced by an error."""
    if item.get_closest_marker("spark") is not None:
        yield
        return
    with pytest.MonkeyPatch.context() as patch:
        _forbid_jvm(patch, item.nodeid)
        yield


def _forbid_jvm(patch: pytest.MonkeyPatch, nodeid: str) -> None:
    try:
        import pyspark.core.context as context
        import pyspark.java_gateway as gateway
    except ImportError:  # no pyspark, no JVM
        return

    def refuse(*args, **kwargs):
        raise RuntimeError(
            f"{nodeid} starts Spark's JVM but is not marked 'spark': request the 'spark' fixture "
            "(tests/conftest.py), or mark it with @pytest.mark.spark (a doctest: SPARK_DOCTESTS in conftest.py)")

    patch.setattr(gateway, "launch_gateway", refuse)
    patch.setattr(context, "launch_gateway", refuse)
