"""The PNG chart of the HTTP benchmark: requests/s and p99 latency at 64 connections, per server and workload."""

from __future__ import annotations

from pathlib import Path

from common.chart import grouped_bars

from .exchange import WORKLOADS
from .report import measured_workloads
from .servers import VARIANTS

CONNECTIONS = 64


def draw_chart(table: dict, info: dict, path: Path) -> str | None:
    """Draw the chart of the medians ``table`` (see :func:`.report.medians`) into ``path``; why not, when it cannot."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return "matplotlib is not installed: no chart (pip install -r benchmarks/requirements.txt)"
    shown = [v for v in VARIANTS if any(CONNECTIONS in cells for cells in table.get(v.name, {}).values())]
    if not shown:
        return "nothing to draw"
    workloads = measured_workloads(table)
    labels = {v.name: v.label for v in shown}
    cmap = plt.get_cmap("tab20")
    colour = {v.name: cmap(k % 20) for k, v in enumerate(shown)}
    fig, axes = plt.subplots(1, 2, figsize=(13, 6.5))
    for ax, key, scale, title, unit in (
        (axes[0], "rps", 1, "requests / s", "requests / s (log scale; median, min–max bars)"),
        (axes[1], "p99_us", 1e-3, "p99 latency", "p99 latency, ms (log scale; lower is better)"),
    ):
        per_name = {}
        for variant in shown:
            cells = {}
            for i, workload in enumerate(workloads):
                cell = table.get(variant.name, {}).get(workload, {}).get(CONNECTIONS)
                if cell:
                    median, low, high = (value * scale for value in cell[key])
                    cells[i] = (median, low, high, "")
            per_name[variant.name] = cells
        names = [f"tools/call {w}" if WORKLOADS[w].tool else w for w in workloads]
        grouped_bars(ax, names, per_name, labels, colour)
        ax.set_ylabel(unit)
        ax.set_title(f"{title}, {CONNECTIONS} keep-alive connections (wrk)")
    handles, names = axes[0].get_legend_handles_labels()
    fig.legend(handles, names, loc="lower center", ncol=3, fontsize=8)
    fig.suptitle(
        f"shipcode-mcp over Streamable HTTP — {info.get('cpu', '?')}, {info.get('cores', '?')} cores, "
        f"Python {info.get('python', '?')}, git {info.get('git_commit', '?')}",
        fontsize=10,
    )
    fig.tight_layout(rect=(0, 0.16, 1, 1))
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return None
