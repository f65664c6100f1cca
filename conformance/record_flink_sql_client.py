"""Record what Flink's SQL client prints for the scripts in ``conformance/sql_client_scripts/``.

Run with a Python that has apache-flink==2.3.0 installed, first on PATH, from the
repository root (``mvn`` fetches the one jar PyFlink does not ship)::

    python conformance/record_flink_sql_client.py            # every script
    python conformance/record_flink_sql_client.py basics     # one

PyFlink's wheel carries Flink's ``bin/``, ``conf/``, ``lib/`` and, in ``opt/``, the
SQL client's jar; the client's embedded gateway needs ``flink-sql-gateway`` too, which
Maven Central serves. The recorder assembles a Flink home from these in a temporary
directory, runs ``bin/sql-client.sh -Dexecution.target=local -f <script>`` (a local
mini-cluster: no cluster to start), and writes the normalised output
(:func:`conformance.sql_client_output.normalise`) to
``conformance/goldens/sql_client/<script>.json`` (the raw output names paths of the
recording machine, so it is not kept).
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from conformance.sql_client_output import normalise  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPTS = os.path.join(HERE, "sql_client_scripts")
GOLDENS = os.path.join(HERE, "goldens", "sql_client")


def flink_home(work: str) -> tuple[str, str]:
    import pyflink

    version = pyflink.version.__version__ if hasattr(pyflink, "version") else "2.3.0"
    source = os.path.dirname(pyflink.__file__)
    home = os.path.join(work, "flink")
    for part in ("bin", "conf", "lib", "opt"):
        shutil.copytree(os.path.join(source, part), os.path.join(home, part))
    os.makedirs(os.path.join(home, "log"))
    for jar in glob.glob(os.path.join(home, "opt", "flink-sql-client-*.jar")):
        shutil.copy(jar, os.path.join(home, "lib"))
    subprocess.run(["mvn", "-q", "dependency:copy", f"-Dartifact=org.apache.flink:flink-sql-gateway:{version}",
                    f"-DoutputDirectory={os.path.join(home, 'lib')}"], check=True, cwd=work)
    return home, version


def record(home: str, version: str, name: str) -> None:
    script = os.path.join(SCRIPTS, f"{name}.sql")
    done = subprocess.run([os.path.join(home, "bin", "sql-client.sh"), "-Dexecution.target=local", "-f", script],
                          capture_output=True, text=True, env={**os.environ, "FLINK_HOME": home}, timeout=1800)
    raw = done.stdout
    os.makedirs(GOLDENS, exist_ok=True)
    golden = {"script": f"{name}.sql", "flink_version": version, "exit_code": done.returncode,
              "lines": normalise(raw)}
    with open(os.path.join(GOLDENS, f"{name}.json"), "w") as f:
        json.dump(golden, f, indent=1)
        f.write("\n")
    print(f"{name}: {len(golden['lines'])} lines, exit code {done.returncode}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("names", nargs="*", help="scripts to record (default: all)")
    args = parser.parse_args()
    names = args.names or sorted(os.path.splitext(os.path.basename(p))[0]
                                 for p in glob.glob(os.path.join(SCRIPTS, "*.sql")))
    with tempfile.TemporaryDirectory() as work:
        home, version = flink_home(work)
        for name in names:
            record(home, version, name)


if __name__ == "__main__":
    main()
