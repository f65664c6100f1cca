"""SQL/JSON paths: parsing (Jayway's grammar, the lax/strict prefix) and evaluation. No Spark."""

import decimal

import pytest

from changeflow.kernels.json.path import (Indexes, JsonPathError, PathNotFound, Property, Scan, Slice,
                                          UnsupportedPath, Wildcard, parse_path, split_mode)


@pytest.mark.parametrize(("spec", "mode", "path"), [
    ("$.a", "strict", "$.a"), ("lax $.a", "lax", "$.a"), ("  STRICT   $.a ", "strict", "$.a "),
    ("Lax\n$", "lax", "$"), ("laxity", "strict", "laxity"),
])
def test_the_mode_prefix_is_split_off_and_strict_is_the_default(spec, mode, path):
    assert split_mode(spec) == (mode, path)


@pytest.mark.parametrize(("spec", "tokens"), [
    ("$", ()),
    ("$.a.b", (Property("a"), Property("b"))),
    ("$['a.b'][0]", (Property("a.b"), Indexes((0,)))),
    ("$.['a.b'][-1]", (Property("a.b"), Indexes((-1,)))),  # Flink's docs use "$.['a.b']"
    ('$["x y"]', (Property("x y"),)),
    ("$.a[*]", (Property("a"), Wildcard())),
    ("$.*", (Wildcard(),)),
    ("$..b", (Scan(), Property("b"))),
    ("$..[0]", (Scan(), Indexes((0,)))),
    ("$.a[0, 2]", (Property("a"), Indexes((0, 2)))),
    ("$.a[1:3]", (Property("a"), Slice(1, 3))),
    ("$.a[:2]", (Property("a"), Slice(None, 2))),
    ("$.a[-2:]", (Property("a"), Slice(-2, None))),
    ("a.b", (Property("a"), Property("b"))),  # Jayway reads it as $.a.b
])
def test_paths_parse_into_tokens(spec, tokens):
    assert parse_path(spec).tokens == tokens


@pytest.mark.parametrize(("spec", "definite"), [
    ("$.a[0]", True), ("$.a[*]", False), ("$..a", False), ("$.a[0,1]", False), ("$.a[0:1]", False),
])
def test_definite_paths(spec, definite):
    assert parse_path(spec).definite is definite


@pytest.mark.parametrize("spec", ["bad path", "$.a.", "$.a[", "$.a[x]", "$x", ""])
def test_invalid_paths_are_errors(spec):
    with pytest.raises(JsonPathError):
        parse_path(spec)


@pytest.mark.parametrize(("spec", "what"), [
    ("$.a[?(@.b == 2)]", "filter"), ("$.a.length()", "function length()"), ("$['a','b']", "property list"),
])
def test_unimplemented_jsonpath_features_are_named(spec, what):
    with pytest.raises(UnsupportedPath, match=what.split()[0]):
        parse_path(spec)


DOC = {"a": [10, 20, {"c": 1}], "b": {"c": 2, "d": None}, "e": "x"}


@pytest.mark.parametrize(("spec", "value"), [
    ("$.a[1]", 20), ("$.a[-1].c", 1), ("$.b.c", 2), ("$.b.d", None), ("$.e", "x"), ("$", DOC),
    ("$.a[*]", [10, 20, {"c": 1}]), ("$..c", [1, 2]), ("$.a[0:2]", [10, 20]), ("$.a[-2:]", [20, {"c": 1}]),
    ("$.a[0,5,1]", [10, 20]), ("$.a[*].c", [1]), ("$.a[*].x", []), ("$.*", [DOC["a"], DOC["b"], "x"]),
])
def test_evaluation(spec, value):
    assert parse_path(spec).evaluate(DOC) == value


@pytest.mark.parametrize("spec", ["$.x", "$.a[5]", "$.e.f", "$.a.b", "$.b[0]", "$.x.y", "$.x[*]"])
def test_a_definite_path_or_prefix_that_matches_nothing_is_not_found(spec):
    with pytest.raises(PathNotFound):
        parse_path(spec).evaluate(DOC)


def test_numbers_keep_their_exact_value():
    assert parse_path("$[0]").evaluate([decimal.Decimal("0.10")]) == decimal.Decimal("0.10")
