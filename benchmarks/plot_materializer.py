"""Plot the sink upsert materializer benchmarks: ops/ms against retract delay, per strategy.

Usage: python benchmarks/plot_materializer.py  (needs matplotlib: ``pip install changeflow[bench]``)

Reads ``benchmarks/results/materializer_kernel.json`` and
``benchmarks/results/materializer_spark.json`` and writes
``docs/materializer_throughput.png``: the kernel (top) and Spark end to end
(bottom), without (left) and with (right) an upsert key, log-log as FLIP-558's
tables read. The end-to-end panels also draw the stateless pass-through
baseline of the same run and the seed's 22 ops/ms target.
"""

from __future__ import annotations

import json
import os

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
STRATEGIES = ("LEGACY", "VALUE", "MAP", "ADAPTIVE")


def load(name: str) -> dict | None:
    path = os.path.join(HERE, "results", name)
    if not os.path.exists(path):
        return None
    with open(path) as fh:
        return json.load(fh)


def curves(ax, doc: dict, with_uk: bool) -> None:
    for strategy in STRATEGIES:
        points = sorted((r["retract_delay"], r["ops_per_ms"]) for r in doc["results"]
                        if r["strategy"] == strategy and r["has_upsert_key"] == with_uk)
        if points:
            ax.plot(*zip(*points, strict=True), marker="o", label=strategy)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("retract delay (history length)")
    ax.set_ylabel("ops/ms")
    ax.grid(True, which="both", alpha=0.3)


def main() -> None:
    kernel, spark = load("materializer_kernel.json"), load("materializer_spark.json")
    fig, axes = plt.subplots(2, 2, figsize=(11, 8), sharex=True)
    for col, with_uk in enumerate((False, True)):
        suffix = "with upsert key" if with_uk else "without upsert key"
        if kernel:
            curves(axes[0][col], kernel, with_uk)
        axes[0][col].set_title(f"kernel, {suffix}")
        if spark:
            curves(axes[1][col], spark, with_uk)
            base = sorted((int(d), b["ops_per_ms"]) for d, b in spark["pass_through_baseline"].items())
            axes[1][col].plot(*zip(*base, strict=True), color="grey", linestyle="--", label="pass-through (no state)")
            axes[1][col].axhline(22, color="red", linestyle=":", label="target 22 ops/ms")
        axes[1][col].set_title(f"Spark end to end, {suffix}")
    for row in axes:
        row[0].legend(fontsize=8)
    fig.suptitle("Sink upsert materializer: 10k records under one key, payload 250 bytes "
                 "(machine load per run: see docs/benchmarks.md)")
    fig.tight_layout()
    out = os.path.join(os.path.dirname(HERE), "docs", "materializer_throughput.png")
    os.makedirs(os.path.dirname(out), exist_ok=True)
    fig.savefig(out, dpi=90)
    print(out)


if __name__ == "__main__":
    main()
