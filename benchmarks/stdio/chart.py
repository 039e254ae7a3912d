"""The stdio PNG chart: throughput per workload, echo throughput by size, and the slow workload's wall time."""

from __future__ import annotations

from pathlib import Path

from common.chart import grouped_bars
from common.fmt import med

from .workloads import SLOW_MS, WORKLOADS


def draw_chart(res: dict, specs: list, path: Path) -> str | None:
    """Draw the chart into ``path``; returns why not when matplotlib is missing."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return "matplotlib is not installed: no chart (pip install -r benchmarks/requirements.txt)"
    thr = res["throughput"]
    wls = [w for w in WORKLOADS if w in thr]
    es = res["echo_scaling"]
    slow = {k: v for k, v in (res.get("slow") or {}).items() if v}
    labels = {s.name: s.label or s.name for s in specs}
    names = [
        s.name
        for s in specs
        if s.available and (any(s.name in thr[w] for w in wls) or any(s.name in per for per in slow.values()))
    ]
    cmap = plt.get_cmap("tab10")
    colour = {name: cmap(k % 10) for k, name in enumerate(names)}
    panels = [p for p, shown in (("throughput", wls), ("echo", es), ("slow", slow)) if shown]
    if not panels:
        return "nothing to draw"
    widths = {"throughput": 2.2, "echo": 1.0, "slow": 1.0}
    fig, axes = plt.subplots(
        1,
        len(panels),
        figsize=(5.0 * sum(widths[p] for p in panels), 6.5),
        gridspec_kw={"width_ratios": [widths[p] for p in panels]},
        squeeze=False,
    )
    for ax, panel in zip(axes[0], panels, strict=True):
        if panel == "throughput":
            _throughput(ax, thr, wls, [n for n in names if any(n in thr[w] for w in wls)], labels, colour)
        elif panel == "echo":
            _echo_sizes(ax, es, names, labels, colour)
        else:
            _slow(ax, slow, names, labels, colour, res["config"].get("slow_limit"))
    legend = {}
    for ax in axes[0]:
        for handle, label in zip(*ax.get_legend_handles_labels(), strict=True):
            legend.setdefault(label, handle)
    fig.legend(list(legend.values()), list(legend), loc="lower center", ncol=min(6, len(legend)), fontsize=9)
    m = res["machine"]
    fig.suptitle(
        f"shipcode-mcp benchmark ({res['mode']}) — {m['cpu']}, {m['cores']} cores, "
        f"Python {m['python']}, git {m['git_commit']}",
        fontsize=10,
    )
    fig.tight_layout(rect=(0, 0.08 if len(legend) > 6 else 0.05, 1, 1))
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return None


def _throughput(ax, thr: dict, wls: list, names: list, labels: dict, colour: dict) -> None:
    per_name = {}
    for name in names:
        cells = {}
        for i, wl in enumerate(wls):
            if thr[wl].get(name):
                st = thr[wl][name]["rps"]
                cells[i] = (st["median"], st["min"], st["max"], "")
        per_name[name] = cells
    grouped_bars(ax, [WORKLOADS[w] for w in wls], per_name, labels, colour)
    ax.set_ylabel("requests / s (log scale; median, min–max bars)")
    ax.set_title("Pipelined throughput over stdio pipes")


def _echo_sizes(ax, es: dict, names: list, labels: dict, colour: dict) -> None:
    for name in names:
        if name not in es:
            continue
        sizes = sorted(int(s) for s in es[name])
        vals = [med(es[name][str(s)], "mb_s") for s in sizes]
        ax.plot(sizes, vals, marker="o", label=labels[name], color=colour[name])
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("echoed text size (bytes)")
    ax.set_ylabel("MB/s of echoed text")
    ax.set_title("Echo throughput by text size")
    ax.grid(which="both", alpha=0.3)


def _slow(ax, slow: dict, names: list, labels: dict, colour: dict, limit: float | None) -> None:
    sizes = sorted(int(k) for k in slow)
    per_name = {}
    for name in names:
        cells = {}
        for i, size in enumerate(sizes):
            cell = slow[str(size)].get(name) or {}
            if "runs" in cell:
                st = cell["wall_ms"]
                cells[i] = (st["median"], st["min"], st["max"], "")
            elif "limited_s" in cell:
                cut = cell["limited_s"] * 1e3
                cells[i] = (cut, cut, cut, "//")
            elif "skipped" in cell:
                cells[i] = (None, None, None, "skipped")
        if cells:
            per_name[name] = cells
    grouped_bars(ax, [f"{k:,} calls" for k in sizes], per_name, labels, colour)
    ax.set_ylabel("wall time, ms (log scale; lower is better; hatched: cut at the limit)")
    ax.set_title(f"Pipelined calls to an async tool awaiting {SLOW_MS} ms")
