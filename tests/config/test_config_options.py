"""The registry: every key's type and default, parsing, unknown keys, registering more."""

import datetime
import enum

import pytest

from changeflow.config import (
    ConfigOption,
    OptionType,
    canonical_key,
    check_key,
    format_memory_size,
    is_validated_key,
    lookup,
    options,
    parse_memory_size,
    register,
    registered_options,
    suggest_keys,
)

ZERO = datetime.timedelta(0)

# key -> (type, default): Flink 2.3's defaults, then changeflow's own keys.
EXPECTED = {
    "execution.runtime-mode": (OptionType.ENUM, "STREAMING"),
    "parallelism.default": (OptionType.INT, 1),
    "table.exec.mini-batch.enabled": (OptionType.BOOLEAN, False),
    "table.exec.mini-batch.allow-latency": (OptionType.DURATION, ZERO),
    "table.exec.mini-batch.size": (OptionType.LONG, -1),
    "table.optimizer.agg-phase-strategy": (OptionType.ENUM, "AUTO"),
    "execution.max-flush-interval": (OptionType.DURATION, None),
    "execution.flush.memory-buffer-only": (OptionType.BOOLEAN, False),
    "execution.flush.memory-buffer-max-entries": (OptionType.INT, 10000),
    "table.exec.sink.upsert-materialize": (OptionType.ENUM, "AUTO"),
    "table.exec.sink.upsert-materialize-strategy.type": (OptionType.ENUM, "LEGACY"),
    "table.exec.sink.upsert-materialize-strategy.adaptive.threshold.high": (OptionType.LONG, 50),
    "table.exec.sink.upsert-materialize-strategy.adaptive.threshold.low": (OptionType.LONG, 40),
    "table.exec.sink.require-on-conflict": (OptionType.BOOLEAN, True),
    "table.exec.state.ttl": (OptionType.DURATION, ZERO),
    "pipeline.name": (OptionType.STRING, None),
    "changeflow.checkpoint-dir": (OptionType.STRING, None),
    "changeflow.spark.master": (OptionType.STRING, "local[*]"),
    "changeflow.state.buckets": (OptionType.INT, 8),
    "changeflow.source.rows-per-batch": (OptionType.INT, 1_000_000),
}

ALLOWED = {
    "execution.runtime-mode": ("STREAMING", "BATCH", "AUTOMATIC"),
    "table.optimizer.agg-phase-strategy": ("AUTO", "ONE_PHASE", "TWO_PHASE"),
    "table.exec.sink.upsert-materialize": ("NONE", "AUTO", "FORCE"),
    "table.exec.sink.upsert-materialize-strategy.type": ("LEGACY", "VALUE", "MAP", "ADAPTIVE"),
}


@pytest.fixture
def scratch_registry(monkeypatch):
    """Let a test register options without leaving them behind for other tests."""
    monkeypatch.setattr(options, "_BY_KEY", dict(options._BY_KEY))


@pytest.mark.parametrize("key", sorted(EXPECTED))
def test_every_key_has_its_type_and_default(key):
    option = lookup(key)
    assert option is not None and option.key == key
    assert (option.type, option.default) == EXPECTED[key]
    assert option.description


@pytest.mark.parametrize("key", sorted(ALLOWED))
def test_enum_keys_list_their_values(key):
    assert set(lookup(key).allowed_values) == set(ALLOWED[key])


def test_all_keys_are_registered_and_listed_once():
    listed = [option.key for option in registered_options()]
    assert len(listed) == len(set(listed))
    assert set(EXPECTED) <= set(listed)
    assert listed == sorted(listed)


def test_descriptions_name_keys_that_exist():
    # A description that points at another key should point at a real one.
    known = {option.key for option in registered_options()}
    for option in registered_options():
        for word in option.description.replace(",", " ").split():
            word = word.rstrip(".;:)")
            if word.startswith(("table.", "execution.", "changeflow.")) and "." in word[6:]:
                assert word in known, (option.key, word)


@pytest.mark.parametrize(
    ("key", "value", "expected"),
    [
        ("execution.runtime-mode", "batch", "BATCH"),
        ("execution.runtime-mode", " Automatic ", "AUTOMATIC"),
        ("parallelism.default", "4", 4),
        ("parallelism.default", " +4 ", 4),
        ("parallelism.default", 4, 4),
        ("table.exec.mini-batch.enabled", "TRUE", True),
        ("table.exec.mini-batch.enabled", "false", False),
        ("table.exec.mini-batch.enabled", True, True),
        ("table.exec.mini-batch.allow-latency", "5 s", datetime.timedelta(seconds=5)),
        ("table.exec.mini-batch.allow-latency", "5000", datetime.timedelta(seconds=5)),
        ("table.exec.mini-batch.allow-latency", 5000, datetime.timedelta(seconds=5)),
        ("table.exec.mini-batch.allow-latency", datetime.timedelta(seconds=5),
         datetime.timedelta(seconds=5)),
        ("table.exec.mini-batch.size", "5000", 5000),
        ("table.exec.mini-batch.size", str(2**40), 2**40),  # a long, not an int
        ("table.optimizer.agg-phase-strategy", "two_phase", "TWO_PHASE"),
        ("execution.max-flush-interval", "2 min", datetime.timedelta(minutes=2)),
        ("execution.flush.memory-buffer-only", "True", True),
        ("execution.flush.memory-buffer-max-entries", "500", 500),
        ("table.exec.sink.upsert-materialize", "force", "FORCE"),
        ("table.exec.sink.upsert-materialize-strategy.type", "map", "MAP"),
        ("table.exec.sink.upsert-materialize-strategy.adaptive.threshold.high", "400", 400),
        ("table.exec.sink.upsert-materialize-strategy.adaptive.threshold.low", "300", 300),
        ("table.exec.sink.require-on-conflict", "FALSE", False),
        ("table.exec.state.ttl", "1 d", datetime.timedelta(days=1)),
        ("changeflow.checkpoint-dir", "/tmp/ckpt", "/tmp/ckpt"),
        ("changeflow.spark.master", "local[2]", "local[2]"),
        ("changeflow.state.buckets", "16", 16),
        ("changeflow.source.rows-per-batch", "1000", 1000),
    ],
)
def test_values_parse_to_their_typed_form(key, value, expected):
    assert lookup(key).parse(value) == expected


class Mode(enum.Enum):
    BATCH = 1


def test_enum_members_are_taken_by_name():
    assert lookup("execution.runtime-mode").parse(Mode.BATCH) == "BATCH"


def test_path_objects_are_strings(tmp_path):
    assert lookup("changeflow.checkpoint-dir").parse(tmp_path) == str(tmp_path)


@pytest.mark.parametrize(
    ("key", "value", "expected"),
    [
        ("table.exec.mini-batch.enabled", "yes", "a boolean: true or false (case-insensitive)"),
        ("table.exec.mini-batch.enabled", "1", "a boolean: true or false"),
        ("table.exec.mini-batch.enabled", 1, "a boolean: true or false"),
        ("parallelism.default", "four", "an integer"),
        ("parallelism.default", "4.0", "an integer"),
        ("parallelism.default", 4.0, "an integer"),
        ("parallelism.default", True, "an integer"),
        ("parallelism.default", str(2**31), "an integer (from -2147483648 to 2147483647)"),
        ("table.exec.mini-batch.size", str(2**63), "an integer"),
        ("changeflow.state.buckets", "0", "an integer from 1 to 2147483647"),
        ("execution.runtime-mode", "STREAM", "one of STREAMING, BATCH, AUTOMATIC"),
        ("table.exec.sink.upsert-materialize", "yes", "one of NONE, AUTO, FORCE"),
        ("table.exec.sink.upsert-materialize-strategy.type", "V2",
         "one of LEGACY, VALUE, MAP, ADAPTIVE"),
        ("table.exec.sink.upsert-materialize-strategy.adaptive.threshold.high", "0", "an integer from 1"),
        ("table.exec.sink.upsert-materialize-strategy.adaptive.threshold.low", "-1", "an integer from 0"),
        ("table.exec.sink.require-on-conflict", "maybe", "a boolean"),
        ("table.exec.state.ttl", "1 week", "unit 'week' is not a known time unit"),
        ("table.exec.state.ttl", "-5 s", "does not start with a number"),
        ("table.exec.state.ttl", -5, "a duration cannot be negative"),
        ("table.exec.state.ttl", datetime.timedelta(seconds=-1), "cannot be negative"),
        ("table.exec.state.ttl", 1.5, "a duration"),
    ],
)
def test_bad_values_name_key_value_and_what_is_accepted(key, value, expected):
    with pytest.raises(ValueError) as error:
        lookup(key).parse(value)
    message = str(error.value)
    assert f"configuration key {key!r}" in message
    assert repr(value) in message
    assert expected in message


def test_bad_duration_lists_the_units():
    with pytest.raises(ValueError) as error:
        lookup("table.exec.state.ttl").parse("1 week")
    assert "MINUTES: (min | m | minute | minutes)" in str(error.value)


def test_none_is_not_a_value():
    with pytest.raises(ValueError, match="remove_config"):
        lookup("table.exec.state.ttl").parse(None)


def test_format_writes_flinks_canonical_spelling():
    assert lookup("table.exec.mini-batch.allow-latency").format("5000ms") == "5 s"
    assert lookup("table.exec.mini-batch.enabled").format("TRUE") == "true"
    assert lookup("execution.runtime-mode").format("batch") == "BATCH"
    assert lookup("table.exec.mini-batch.size").format(" 7 ") == "7"


# ----------------------------------------------------------------------------------------
#  Aliases, prefixes, unknown keys.
# ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("alias", "primary"),
    [
        ("table.exec.sink.upsert-materialize.strategy",
         "table.exec.sink.upsert-materialize-strategy.type"),
        ("table.exec.sink.upsert-materialize.adaptive.threshold.high",
         "table.exec.sink.upsert-materialize-strategy.adaptive.threshold.high"),
        ("table.exec.sink.upsert-materialize.adaptive.threshold.low",
         "table.exec.sink.upsert-materialize-strategy.adaptive.threshold.low"),
    ],
)
def test_alias_keys_resolve_to_the_primary_key(alias, primary):
    assert lookup(alias) is lookup(primary)
    assert canonical_key(alias) == primary


def test_validated_prefixes():
    for key in ("table.x", "execution.x", "parallelism.x", "pipeline.name", "changeflow.x",
                "Table.Exec.X", " table.x"):
        assert is_validated_key(key), key
    for key in ("spark.sql.shuffle.partitions", "connector", "sink.parallelism", "tables.x",
                "parallelism"):
        assert not is_validated_key(key), key


def test_free_keys_are_not_options():
    assert check_key("spark.sql.shuffle.partitions") is None
    assert check_key("my.own.key") is None
    assert canonical_key("my.own.key") == "my.own.key"


@pytest.mark.parametrize(
    ("typo", "meant"),
    [
        ("table.exec.mini-batch.enable", "table.exec.mini-batch.enabled"),
        ("table.exec.minibatch.enabled", "table.exec.mini-batch.enabled"),
        ("table.exec.mini-batch.allow_latency", "table.exec.mini-batch.allow-latency"),
        ("TABLE.EXEC.MINI-BATCH.ENABLED", "table.exec.mini-batch.enabled"),
        ("execution.runtime_mode", "execution.runtime-mode"),
        ("execution.flush.max-flush-interval", "execution.max-flush-interval"),
        ("table.exec.state-ttl", "table.exec.state.ttl"),
        ("parallelism.defaults", "parallelism.default"),
        ("changeflow.state.bucket", "changeflow.state.buckets"),
        ("table.exec.sink.upsert-materialize.strategy.type",
         "table.exec.sink.upsert-materialize-strategy.type"),
    ],
)
def test_unknown_key_suggests_the_closest_known_key(typo, meant):
    assert suggest_keys(typo)[0] == meant
    with pytest.raises(ValueError) as error:
        check_key(typo)
    message = str(error.value)
    assert f"Unknown configuration key {typo!r}" in message
    assert f"Did you mean {meant!r}?" in message


def test_unknown_key_without_a_close_match_lists_keys_under_its_prefix():
    with pytest.raises(ValueError) as error:
        check_key("changeflow.zzzzzzzz")  # nothing close to it (difflib ratio < 0.6)
    assert "Known keys under 'changeflow.': changeflow.checkpoint-dir" in str(error.value)


def test_unknown_key_under_a_prefix_with_no_known_keys(monkeypatch):
    # Every validated prefix has keys today; a prefix added before its first key must still say so.
    # (The prefix is made up: 'state.backend.type', used before, is now a known Flink key.)
    monkeypatch.setattr(options, "VALIDATED_PREFIXES", options.VALIDATED_PREFIXES + ("fresh.",))
    with pytest.raises(ValueError, match="changeflow knows no key under 'fresh.'"):
        check_key("fresh.backend.type")


def test_unknown_key_error_explains_the_rule():
    with pytest.raises(ValueError) as error:
        check_key("table.exec.nothing-like-this-at-all")
    message = str(error.value)
    assert "Flink would silently ignore them" in message
    assert "'spark.'" in message


# ----------------------------------------------------------------------------------------
#  Registering options.
# ----------------------------------------------------------------------------------------


def test_register_adds_an_option_and_returns_it(scratch_registry):
    option = register(ConfigOption("changeflow.test.window", OptionType.DURATION, "1 min",
                                   description="test", fallback_keys=("changeflow.test.win",)))
    assert option.default == datetime.timedelta(minutes=1)
    assert lookup("changeflow.test.window") is option
    assert lookup("changeflow.test.win") is option
    assert check_key("changeflow.test.window") is option
    assert "changeflow.test.window" in [o.key for o in registered_options()]


def test_registering_the_same_option_again_is_a_no_op(scratch_registry):
    first = register(ConfigOption("changeflow.test.n", OptionType.INT, 1))
    register(ConfigOption("changeflow.test.n", OptionType.INT, 1))
    assert lookup("changeflow.test.n") == first


def test_registering_a_different_option_under_a_taken_key_fails(scratch_registry):
    with pytest.raises(ValueError, match="already registered"):
        register(ConfigOption("table.exec.state.ttl", OptionType.INT, 1))
    with pytest.raises(ValueError, match="already registered"):
        register(ConfigOption("changeflow.test.other", OptionType.INT, 1,
                              fallback_keys=("table.exec.sink.upsert-materialize.strategy",)))
    # Nothing of the failed registration is left behind.
    assert lookup("changeflow.test.other") is None


@pytest.mark.parametrize("key", ["spark.sql.foo", "changeflow.Test", "changeflow.a b"])
def test_register_refuses_spark_keys_and_odd_spellings(scratch_registry, key):
    with pytest.raises(ValueError, match="cannot register"):
        register(ConfigOption(key, OptionType.INT, 1))


def test_register_takes_only_options():
    with pytest.raises(TypeError):
        register("changeflow.test.x")


def test_option_definitions_are_checked():
    with pytest.raises(ValueError, match="allowed_values"):
        ConfigOption("changeflow.test.e", OptionType.ENUM, "A")
    with pytest.raises(ValueError, match="allowed_values"):
        ConfigOption("changeflow.test.e", OptionType.INT, 1, allowed_values=("A",))
    with pytest.raises(ValueError, match="min_value"):
        ConfigOption("changeflow.test.e", OptionType.STRING, "x", min_value=1)
    with pytest.raises(ValueError, match="Invalid value 'soon'"):
        ConfigOption("changeflow.test.e", OptionType.DURATION, "soon")
    with pytest.raises(TypeError):
        ConfigOption("changeflow.test.e", int, 1)


def test_float_and_memory_size_options():
    ratio = ConfigOption("changeflow.test.ratio", OptionType.FLOAT, "0.5")
    assert ratio.default == 0.5
    assert ratio.parse(2) == 2.0
    for bad in ("nan", "inf", "1_0", "half", True):
        with pytest.raises(ValueError, match="a finite number"):
            ratio.parse(bad)
    memory = ConfigOption("changeflow.test.memory", OptionType.MEMORY_SIZE, "64 mb")
    assert memory.default == 64 << 20
    assert memory.format(memory.default) == "64 mb"
    with pytest.raises(ValueError, match="unit 'mib' is not a known memory unit"):
        memory.parse("1 mib")


@pytest.mark.parametrize(
    ("text", "size"),
    [("512", 512), ("1b", 1), ("2 bytes", 2), ("1k", 1024), ("1 KB", 1024), ("3 kibibytes", 3072),
     ("1m", 1 << 20), ("1 mb", 1 << 20), ("1 g", 1 << 30), ("1 gb", 1 << 30), ("1 t", 1 << 40),
     ("2 tebibytes", 2 << 40)],
)
def test_parse_memory_size(text, size):
    assert parse_memory_size(text) == size


def test_format_memory_size():
    assert format_memory_size(0) == "0 bytes"
    assert format_memory_size(1536) == "1536 bytes"
    assert format_memory_size(3 << 30) == "3 gb"
    with pytest.raises(ValueError, match="does not start with a number"):
        parse_memory_size("mb")
