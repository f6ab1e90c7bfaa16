"""``change``: a relative change written with its sign, as the kernel test robot writes it,
on every page that lists alerts (the dashboards' and ingest's alike)."""

from __future__ import annotations

from django import template

register = template.Library()


@register.filter(name="change")
def change_filter(pct: float | None, places: int = 1) -> str:
    """``+139.9 %``, ``-32.6 %``; a rise without its "+" reads as a size, not a direction."""
    if pct is None:
        return "—"
    return f"{pct:+.{int(places)}f} %"
