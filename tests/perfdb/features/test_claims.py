"""perfdb.features.claims: a stated change against the stored values."""

from __future__ import annotations

import pytest

from perfdb.features.claims import (
    CONTRADICTED,
    NO_DATA,
    NOT_TESTABLE,
    SUPPORTED,
    check_claim,
    rounding_of,
)


@pytest.mark.parametrize(
    "stated, half", [(4.7, 0.05), (10, 0.5), (24.0, 0.5), (-5.1, 0.05), (0.25, 0.005)]
)
def test_rounding_of_the_stated_figure(stated, half):
    assert rounding_of(stated) == pytest.approx(half)


@pytest.mark.parametrize(
    "base, new, stated, verdict",
    [
        ((100,), (104.3,), 4.7, CONTRADICTED),  # 002 Table 8 vs text
        ((100,), (104.4,), 4.3, CONTRADICTED),  # Table 9: "a similar 4.3%"
        ((100,), (89.4,), -10, CONTRADICTED),  # Table 7: "the 10% degradation"
        ((100,), (111.6,), 11.6, NOT_TESTABLE),
        ((100,), (100,), 0, NOT_TESTABLE),
        ((), (100,), 3, NO_DATA),
    ],
)
def test_single_values(base, new, stated, verdict):
    check = check_claim(base, new, stated, "higher")
    assert check.verdict == verdict
    assert check.ci_low_pct is None


def test_trials_give_an_interval():
    base, new = (100, 101, 99, 100), (110, 111, 109, 110)
    ok = check_claim(base, new, 10, "higher")
    assert ok.verdict == SUPPORTED and ok.ci_low_pct < 10 < ok.ci_high_pct
    bad = check_claim(base, new, 42.2, "higher")
    assert bad.verdict == CONTRADICTED and "42.2" in bad.reason
    noisy = check_claim((100, 120, 80), (105, 85, 125), 5, "higher")
    assert noisy.verdict == NOT_TESTABLE
