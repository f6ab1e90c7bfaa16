"""Template filters that write numbers the way the compare page and the reports do."""

from __future__ import annotations

from django import template

from dashboards.compare import p_text

register = template.Library()


@register.filter(name="p_text")
def p_text_filter(p: float) -> str:
    """``p = 0.0031``, or ``p < 0.0001``: an alert's p-value as the compare page writes it
    (``floatformat`` printed a p of 1e-7 as "p = 0.0000", which reads as impossible)."""
    return p_text(p)


@register.filter(name="change")
def change_filter(pct: float | None, places: int = 1) -> str:
    """``+139.9 %``, ``-32.6 %``: a change with its sign, as the kernel test robot writes it;
    a rise without its "+" reads as a size, not a direction."""
    if pct is None:
        return "—"
    return f"{pct:+.{int(places)}f} %"
