"""How figures are written in the progress log, the report and the chart."""

from __future__ import annotations


def fmt_size(b: int) -> str:
    if b >= 1 << 20:
        return f"{b >> 20} MiB"
    if b >= 1024:
        return f"{b // 1024} KiB"
    return f"{b} B"


def fmt_rate(v: float | None) -> str:
    if v is None:
        return "n/a"
    if v >= 1e6:
        return f"{v / 1e6:.2f}M"
    if v >= 1e4:
        return f"{v / 1e3:.0f}k"
    if v >= 1e3:
        return f"{v / 1e3:.1f}k"
    return f"{v:.0f}"


def fmt_num(v: float | None, digits: int = 1) -> str:
    if v is None:
        return "n/a"
    if v >= 1000:
        return f"{v:,.0f}"
    return f"{v:.{digits}f}"


def med(cell: dict | None, key: str) -> float | None:
    if not cell or not cell.get(key):
        return None
    return cell[key]["median"]
