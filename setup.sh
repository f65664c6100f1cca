#!/usr/bin/env bash
# Sets up .venv at the repository root with changeflow, its test tools, its linters, the jdbc connector's
# client (psycopg) and the delta connector's delta-rs (deltalake), then runs the demo. Spark needs a Java
# runtime: installed from Debian when missing.
set -euo pipefail
cd "$(dirname "$0")"
if ! command -v java >/dev/null 2>&1; then
  apt-get update -q && apt-get install -y -q openjdk-17-jre-headless
fi
# PostgreSQL for the jdbc connector's tests (they start a throwaway cluster with initdb): Debian's package
# when no initdb is on PATH or in /usr/lib/postgresql/*/bin. The package also creates the 'postgres' user
# that the tests run the server as when they run as root (PostgreSQL refuses root).
if ! command -v initdb >/dev/null 2>&1 && ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then
  apt-get update -q && apt-get install -y -q postgresql
fi
python3 -m venv .venv
.venv/bin/pip install -q --upgrade pip
.venv/bin/pip install -q -e '.[test,lint,jdbc,kafka,delta,avro]'
# pyright's first run may fetch what it is missing; it runs here, on the Node.js wheel installed
# above (as .ci/lint does), so the linters later run offline.
PYRIGHT_PYTHON_GLOBAL_NODE=0 .venv/bin/pyright --version >/dev/null
# PyFlink's own example programs, which the conformance tests run under changeflow: the wheel is
# downloaded (not installed: no Flink is needed) and the tests read the examples from it.
.venv/bin/pip download -q --no-deps -d .venv/pyflink-wheel apache-flink==2.3.0
# The Kafka connector (its Python client is the kafka extra above): Spark's Kafka source jars (on changeflow's own session's
# spark.jars) and, for its tests, Apache Kafka's broker, fetched through Maven into .venv/jars (tools/kafka).
for part in spark broker; do
  mvn -q -B -f "tools/kafka/$part-pom.xml" dependency:copy-dependencies -DincludeScope=runtime \
    -DoutputDirectory="$PWD/.venv/jars/$([ "$part" = spark ] && echo spark-kafka || echo kafka-broker)"
done
.venv/bin/python examples/daily_uv.py
