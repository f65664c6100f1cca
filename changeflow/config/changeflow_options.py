"""changeflow's own keys (``changeflow.*``): where checkpoints go, the Spark master, shipping the package,
the state layout and the micro-batch size of changeflow's sources."""

from __future__ import annotations

from changeflow.config.options import ConfigOption, OptionType, register

CHANGEFLOW_CHECKPOINT_DIR = register(
    ConfigOption(
        "changeflow.checkpoint-dir",
        OptionType.STRING,
        None,
        description=(
            "Where streaming jobs keep their checkpoints (Spark checkpointLocation): a "
            "streaming INSERT job or a named DataStream execute() uses <dir>/<job name> and "
            "resumes from it when run again; interactive queries (SELECT, "
            "execute_and_collect) use a temporary directory below it. Unset: a new temporary "
            "directory per job, so nothing resumes."
        ),
    )
)

CHANGEFLOW_SPARK_MASTER = register(
    ConfigOption(
        "changeflow.spark.master",
        OptionType.STRING,
        "local[*]",
        description=(
            "The Spark master URL used when changeflow creates its own SparkSession; ignored "
            "when the environment is given an existing session."
        ),
    )
)

CHANGEFLOW_SPARK_LOG = register(
    ConfigOption(
        "changeflow.spark.log",
        OptionType.STRING,
        None,
        description=(
            "Where the Spark JVM's console output (log4j's warnings, the Python workers' lines) "
            "goes when changeflow starts Spark itself. Unset: the file spark.log in changeflow's "
            "temporary directory of the process (it stays after the process ends, until the next "
            "changeflow process cleans it up); a path: that file (appended to); 'console': the "
            "terminal, as Spark prints it. A failing job's error reaches the caller either way. "
            "Read when the session is created; a session the user passes in is not changed."
        ),
    )
)

CHANGEFLOW_SPARK_UI = register(
    ConfigOption(
        "changeflow.spark.ui",
        OptionType.BOOLEAN,
        False,
        description=(
            "Whether a SparkSession changeflow starts itself serves Spark's web UI (its address is "
            "printed on standard error when the session starts). Off by default: a local job "
            "needs no UI port. Read when the session is created."
        ),
    )
)

CHANGEFLOW_SPARK_WARM_PYTHON = register(
    ConfigOption(
        "changeflow.spark.warm-python",
        OptionType.BOOLEAN,
        True,
        description=(
            "Whether a SparkSession changeflow starts itself on a local[...] master has Spark's "
            "Python processes (the one per stateful operator at each query start, the workers' "
            "daemon) forked from a server process that has imported pyspark and pandas already, "
            "instead of started afresh (seconds per query start on a loaded machine). Ignored "
            "off local[...], for a session the user passes in, and where PYSPARK_PYTHON names "
            "another interpreter. Read when the session is created."
        ),
    )
)

CHANGEFLOW_SPARK_QUICK_JIT = register(
    ConfigOption(
        "changeflow.spark.quick-jit",
        OptionType.BOOLEAN,
        True,
        description=(
            "Whether the JVM of a SparkSession changeflow starts itself on a local[...] master "
            "compiles with HotSpot's quick (C1) JIT compiler only (-XX:TieredStopAtLevel=1). Spark "
            "generates new classes for every query, and the optimising (C2) compiler spent more CPU "
            "compiling them than small and medium local jobs spent running; a long local job over "
            "much data may run faster with false. Ignored off local[...], for a session the user "
            "passes in, and when the JVM options given choose a level. Read when the session is created."
        ),
    )
)

CHANGEFLOW_SHIP_PACKAGE = register(
    ConfigOption(
        "changeflow.ship-package",
        OptionType.BOOLEAN,
        True,
        description=(
            "Off a local[...] master, add a zip of the driver's changeflow package to the "
            "session (SparkContext.addPyFile) so that executors without changeflow run it. "
            "false: the executors' Python environment provides changeflow."
        ),
    )
)

CHANGEFLOW_STATE_BUCKETS = register(
    ConfigOption(
        "changeflow.state.buckets",
        OptionType.INT,
        8,
        min_value=1,
        description=(
            "How many hash buckets each stateful operator spreads its keys over. A bucket is "
            "the unit Spark groups by and one Python call folds, so a few buckets per core "
            "balance parallelism against per-call overhead."
        ),
    )
)

CHANGEFLOW_SOURCE_ROWS_PER_BATCH = register(
    ConfigOption(
        "changeflow.source.rows-per-batch",
        OptionType.INT,
        1_000_000,
        min_value=1,
        description=(
            "The most rows per micro-batch for sources changeflow implements itself, when "
            "mini-batch is off (with mini-batch on, table.exec.mini-batch.size bounds it)."
        ),
    )
)
