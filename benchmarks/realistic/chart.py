"""The workload's PNG chart: MCP requests/s, server CPU per MCP request and the p99 of a whole call, per server
and variant (the benchmarks' shared grouped bars)."""

from __future__ import annotations

from pathlib import Path

from common.chart import grouped_bars
from report import TITLES

PANELS = (
    ("requests_per_s", 1, "MCP requests / s (log scale)"),
    ("server_cpu_ms_per_request", 1, "server CPU per MCP request, ms (log scale; lower is better)"),
    ("p99", 1, "p99 of a whole call, ms (log scale; lower is better)"),
)


def _value(run: dict, key: str) -> float | None:
    return run["iteration"]["p99_ms"] if key == "p99" else run[key]


def draw_chart(result: dict, path: Path) -> str | None:
    """Draw the chart into ``path``; why not, when it cannot."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return "matplotlib is not installed: no chart (pip install -r benchmarks/requirements.txt)"
    runs = result["runs"]
    variants = [v for v in TITLES if any(r["variant"] == v for r in runs)]
    if not variants:
        return "nothing to draw"
    labels = {r["server"]: r["label"] for r in runs}
    cmap = plt.get_cmap("tab10")
    colour = {name: cmap(k % 10) for k, name in enumerate(labels)}
    fig, axes = plt.subplots(1, len(PANELS), figsize=(16, 6))
    for ax, (key, _, title) in zip(axes, PANELS, strict=True):
        per_name = {}
        for name in labels:
            cells = {}
            for i, variant in enumerate(variants):
                run = next((r for r in runs if r["server"] == name and r["variant"] == variant), None)
                value = _value(run, key) if run else None
                if value:
                    cells[i] = (value, value, value, "")
            per_name[name] = cells
        grouped_bars(
            ax,
            [{"legacy": "2025 session per call", "stateless": "2026-07-28"}[v] for v in variants],
            per_name,
            labels,
            colour,
        )
        ax.set_title(title, fontsize=9)
    handles, names = axes[0].get_legend_handles_labels()
    fig.legend(handles, names, loc="lower center", ncol=len(names), fontsize=9)
    info, config = result["machine"], result["config"]
    fig.suptitle(
        f"Realistic workload (Redis + HTTP API, the tools on {config.get('http_client', 'httpx')}), "
        f"k6 {config['vus']} VUs, {config['seconds']:g} s — {info['cpu']}, "
        f"{info['cores']} cores, git {info['git_commit']}",
        fontsize=10,
    )
    fig.tight_layout(rect=(0, 0.07, 1, 1))
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return None
