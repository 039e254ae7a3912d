"""The PNG chart: throughput per workload and echo throughput by size."""

from __future__ import annotations

from pathlib import Path

from .fmt import med
from .workloads import WORKLOADS


def draw_chart(res: dict, specs: list, path: Path) -> str | None:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return "matplotlib is not installed: no chart (pip install -r benchmarks/requirements.txt)"
    thr = res["throughput"]
    wls = [w for w in WORKLOADS if w in thr]
    names = [s.name for s in specs if s.available and any(s.name in thr[w] for w in wls)]
    labels = {s.name: s.label or s.name for s in specs}
    es = res["echo_scaling"]
    fig, axes = plt.subplots(
        1, 2 if es else 1, figsize=(16 if es else 11, 6.5), gridspec_kw={"width_ratios": [2.2, 1]} if es else None
    )
    ax = axes[0] if es else axes
    width = 0.8 / max(1, len(names))
    cmap = plt.get_cmap("tab10")
    for k, name in enumerate(names):
        xs, ys, lo, hi = [], [], [], []
        for i, wl in enumerate(wls):
            cell = thr[wl].get(name)
            if not cell:
                continue
            st = cell["rps"]
            xs.append(i - 0.4 + width * (k + 0.5))
            ys.append(st["median"])
            lo.append(st["median"] - st["min"])
            hi.append(st["max"] - st["median"])
        ax.bar(xs, ys, width, yerr=[lo, hi], capsize=2, label=labels[name], color=cmap(k % 10))
    ax.set_yscale("log")
    ax.set_xticks(range(len(wls)))
    ax.set_xticklabels([WORKLOADS[w] for w in wls])
    ax.set_ylabel("requests / s (log scale; median, min–max bars)")
    ax.set_title("Pipelined throughput over stdio pipes")
    ax.grid(axis="y", which="both", alpha=0.3)
    handles, names_ = ax.get_legend_handles_labels()
    fig.legend(handles, names_, loc="lower center", ncol=min(6, len(names_)), fontsize=9, frameon=False)
    if es:
        ax2 = axes[1]
        for k, name in enumerate(names):
            if name not in es:
                continue
            sizes = sorted(int(s) for s in es[name])
            vals = [med(es[name][str(s)], "mb_s") for s in sizes]
            ax2.plot(sizes, vals, marker="o", label=labels[name], color=cmap(k % 10))
        ax2.set_xscale("log")
        ax2.set_yscale("log")
        ax2.set_xlabel("echoed text size (bytes)")
        ax2.set_ylabel("MB/s of echoed text")
        ax2.set_title("Echo throughput by text size")
        ax2.grid(which="both", alpha=0.3)
    m = res["machine"]
    fig.suptitle(
        f"shipcode-mcp benchmark ({res['mode']}) — {m['cpu']}, {m['cores']} cores, "
        f"Python {m['python']}, git {m['git_commit']}",
        fontsize=10,
    )
    fig.tight_layout(rect=(0, 0.08 if len(names) > 6 else 0.05, 1, 1))
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return None
