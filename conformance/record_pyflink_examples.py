"""Record what PyFlink 2.3 prints for its own examples (see pyflink_examples.py).

Run with a Python environment that has apache-flink==2.3.0 first on PATH (Flink
starts its Python workers with the ``python`` on PATH), from the repository root:

    PATH=/path/to/flink-venv/bin:$PATH python conformance/record_pyflink_examples.py [name ...]

Each example runs in its own process (``python <file>``) with a 10-minute limit;
its standard output goes to ``goldens/examples/<name>.txt`` (a ``_file_sink`` run's: then the lines
its FileSink wrote, see ``written``). Flink's INFO log
lines go to standard output in some examples (``logging.basicConfig(stream=sys.stdout)``);
lines of the logging format are kept, they are part of what the program prints.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from conformance.pyflink_examples import EXAMPLES, FAILED, GOLDENS, program_args, written  # noqa: E402


def main(names: list[str]) -> int:
    import pyflink  # the installed PyFlink: its examples are the ones recorded
    examples_dir = os.path.join(os.path.dirname(pyflink.__file__), "examples")
    os.makedirs(GOLDENS, exist_ok=True)
    for name, (path, _) in EXAMPLES.items():
        if names and name not in names:
            continue
        with tempfile.TemporaryDirectory() as cwd:
            run = subprocess.run([sys.executable, os.path.join(examples_dir, path), *program_args(name)], cwd=cwd,
                                 capture_output=True, text=True, timeout=600)
            output = run.stdout + written(cwd)
        if run.returncode != 0:
            # Some of PyFlink's own examples fail under PyFlink 2.3: what they print before failing
            # is kept, and the failure is marked, so changeflow must fail there too.
            error = run.stderr.strip().splitlines()[-1] if run.stderr.strip() else ""
            print(f"{name}: fails under PyFlink ({run.returncode}): {error}")
            output += f"{FAILED}\n"
        with open(os.path.join(GOLDENS, f"{name}.txt"), "w") as f:
            f.write(output)
        print(f"{name}: {len(output.splitlines())} lines")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
