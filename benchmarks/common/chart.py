"""Grouped bars with their spread, the figure every benchmark's PNG chart is drawn from."""

from __future__ import annotations


def grouped_bars(ax, groups: list, per_name: dict, labels: dict, colour: dict) -> None:
    """Grouped bars: per_name maps a server to {group index: (median, min, max, hatch)}; a median of None
    is written as its hatch text (``skipped``) instead of a bar."""
    from matplotlib.transforms import blended_transform_factory

    width = 0.8 / max(1, len(per_name))
    for k, (name, cells) in enumerate(per_name.items()):
        xs, ys, lo, hi, hatches = [], [], [], [], []
        for i, (median, low, high, hatch) in sorted(cells.items()):
            x = i - 0.4 + width * (k + 0.5)
            if median is None:
                where = blended_transform_factory(ax.transData, ax.transAxes)
                ax.text(x, 0.02, hatch, transform=where, rotation=90, ha="center", va="bottom", fontsize=8)
                continue
            xs.append(x)
            ys.append(median)
            lo.append(median - low)
            hi.append(high - median)
            hatches.append(hatch)
        bars = ax.bar(xs, ys, width, yerr=[lo, hi], capsize=2, label=labels[name], color=colour[name])
        for bar, hatch in zip(bars, hatches, strict=True):
            if hatch:
                bar.set_hatch(hatch)
                bar.set_alpha(0.5)
    ax.set_yscale("log")
    ax.set_xticks(range(len(groups)))
    ax.set_xticklabels(groups)
    ax.grid(axis="y", which="both", alpha=0.3)
