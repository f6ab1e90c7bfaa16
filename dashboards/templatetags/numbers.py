"""Template filters that write numbers the way the compare page does."""

from __future__ import annotations

from django import template

from dashboards.pure.compare_text import p_text

register = template.Library()


@register.filter(name="p_text")
def p_text_filter(p: float) -> str:
    """``p = 0.0031``, or ``p < 0.0001``: an alert's p-value as the compare page writes it
    (``floatformat`` printed a p of 1e-7 as "p = 0.0000", which reads as impossible)."""
    return p_text(p)
