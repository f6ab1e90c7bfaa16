"""How the compare page writes its numbers: a side's mean ± sd (n), a % change, a p-value, a
threshold, and the detector's reasons without their exponents. Pure, over plain numbers.

The rule that decides what is significant is ``dashboards.pure.compare``; its rows and
reasons are written with these, and so are the compare figure's hover text
(``dashboards.figures.compare``) and an alert's p-value on its pages (the ``p_text`` filter).
A reader skims a column of numbers: four significant digits, thousands separated, and never
an exponent, which hides the size.
"""

from __future__ import annotations

import math
import re

# Below this a p-value is written as a bound: its digits are past what the test can tell
# (the t distribution's tail with three values a side), and ``:.3g`` would print 1.2e-07.
P_FLOOR = 1e-4


def number_text(value: float) -> str:
    """Four significant digits, thousands separated: 13,100 and 15.27 and 0.0123."""
    if abs(value) >= 1e4:
        return f"{value:,.0f}"
    return f"{value:,.4g}" if value == 0 or abs(value) >= 1e-3 else plain_text(value, 4)


def side_text(mean: float | None, sd: float | None, n: int) -> str:
    """``mean ± sd (n)``, the sd left out for a single value, a dash for no value."""
    if mean is None:
        return "—"
    text = number_text(mean)
    if sd is not None:
        text += f" ± {number_text(sd)}"
    return f"{text} ({n})"


def report_side_text(mean: float, sd: float | None, sd_pct: float | None, runs: int | None) -> str:
    """A report's mean with its spread as printed and the runs it states:
    ``676,543 ± 3 % (report, n 6)``."""
    stated = f", n {runs}" if runs is not None else ""
    return f"{number_text(mean)} {_spread_text(sd, sd_pct)} (report{stated})".replace("  ", " ")


def _spread_text(sd: float | None, sd_pct: float | None) -> str:
    """The spread as the report prints it: ``± 3 %`` or ``± 0.021``."""
    if sd_pct is not None:
        return f"± {_as_printed(sd_pct)} %"
    if sd is not None:
        return f"± {number_text(sd)}"
    return ""


def _as_printed(value: float) -> str:
    """A report's number as short as ``:g`` writes it, without its exponent (1e-05)."""
    text = f"{value:g}"
    if "e" not in text or not math.isfinite(value):
        return text
    return plain_text(value, 6).rstrip("0").rstrip(".")


def change_pct_text(change_pct: float | None) -> str:
    """``+12.3 %``, or a dash when there is no relative change."""
    return "—" if change_pct is None else f"{change_pct:+.1f} %"


def percent_text(value: float) -> str:
    """A threshold as people write it: 32 %, 4.5 %, 0.25 %, 0.0012 %; never 1.2e+02."""
    if not math.isfinite(value):
        return "no test"
    if abs(value) >= 10:
        return f"{value:,.0f} %"
    if abs(value) >= 1:
        return f"{value:.1f} %"
    if value == 0:
        return "0 %"
    return f"{plain_text(value, 2).rstrip('0').rstrip('.')} %"  # as :.2g, without its exponent


def plain_text(value: float, digits: int) -> str:
    """``value`` to ``digits`` significant digits in positional notation: 0.000012, not the
    1.2e-05 that ``:g`` prints below 1e-4 (a reader skims a column of numbers; an exponent
    hides the size)."""
    if value == 0 or not math.isfinite(value):
        return f"{value:g}"
    decimals = max(0, digits - 1 - math.floor(math.log10(abs(value))))
    return f"{value:.{decimals}f}"


_EXPONENT = re.compile(r"(?<![\w.])(\d+(?:\.(\d+))?)[eE]([+-]?\d+)\b")


def without_exponents(text: str) -> str:
    """``text`` with each number in scientific notation written out, its digits kept:
    the detector's reasons say ``p = 2e-05``; the page says ``p = 0.00002``."""

    def plain(match: re.Match[str]) -> str:
        digits = len(match[1].replace(".", "").lstrip("0")) or 1
        return plain_text(float(match[0]), digits)

    return _EXPONENT.sub(plain, text)


def p_text(p: float) -> str:
    """``p = 0.0031``, or ``p < 0.0001`` below the floor."""
    return "p < 0.0001" if p < P_FLOOR else f"p = {p:.3g}"
