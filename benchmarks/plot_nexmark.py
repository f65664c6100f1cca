"""Plot the Nexmark benchmark: events per CPU-second per query, changeflow beside Flink 2.3.

Usage: python benchmarks/plot_nexmark.py [RESULTS.json [OUT.png]]  (needs matplotlib:
``pip install changeflow[bench]``)

Reads a result file of ``nexmark.py`` (by default ``benchmarks/results/nexmark.json``) and
writes a chart (by default ``docs/nexmark_throughput.png``): one pair of bars per query (log
scale); a query that an engine has no figure for (it fails or was not run) is marked with an x
on the axis.
"""

from __future__ import annotations

import json
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))


def main(results: str = os.path.join(HERE, "results", "nexmark.json"),
         out: str = os.path.join(os.path.dirname(HERE), "docs", "nexmark_throughput.png")) -> None:
    with open(results) as fh:
        doc = json.load(fh)
    queries = list(doc["results"])
    fig, ax = plt.subplots(figsize=(12, 4.5))
    width = 0.4
    for offset, engine, color in ((-width / 2, "changeflow", "tab:blue"), (width / 2, "flink", "tab:orange")):
        xs, ys, missing = [], [], []
        for i, q in enumerate(queries):
            value = doc["results"][q][engine].get("events_per_cpu_s")
            if value:
                xs.append(i + offset)
                ys.append(value)
            else:
                missing.append(i + offset)
        ax.bar(xs, ys, width, label="changeflow" if engine == "changeflow" else "Flink 2.3", color=color)
        # on the x axis (axes coordinates in y), whatever the log scale's range
        ax.scatter(missing, [0] * len(missing), marker="x", color=color, clip_on=False, zorder=3,
                   transform=ax.get_xaxis_transform())
    ax.set_yscale("log")
    ax.set_xticks(range(len(queries)), queries)
    ax.set_ylabel("events per CPU-second")
    ax.grid(True, axis="y", which="both", alpha=0.3)
    ax.legend()
    load = doc.get("load_average_1min", {})
    ax.set_title(f"Nexmark, {doc['events']:,} events, parallelism {doc['parallelism']}, 2 shared cores "
                 f"(load average {load.get('mean', '?')}); x: no figure (the query fails or was not run)",
                 fontsize=10)
    fig.tight_layout()
    fig.savefig(out, dpi=90)
    print(out)


if __name__ == "__main__":
    main(*sys.argv[1:3])
