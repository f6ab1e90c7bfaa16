"""A drift: a series a little worse kernel after kernel is alerted once, as a drift; a
clean series, a step and a spike are not drifts."""

from __future__ import annotations

import pytest

from perfdb.detector import Point, Settings, check
from perfdb.detector.drift import METHOD

# each kernel's level a little off its true one, as runs are: no series is exactly straight
WOBBLE = (0.4, -0.5, 0.1, 0.6, -0.3, -0.2, 0.5, -0.6, 0.2, 0.0, -0.4, 0.3)


def points(factors: list[float]) -> list[Point]:
    """Three trials 2 % apart around 1000 x each kernel's factor, kernels 6.1.0 on."""
    return [
        Point(
            i + 1,
            f"6.{i + 1}.0",
            (),
            tuple(1000 * f * (1 + WOBBLE[i] / 100) * (1 + e) for e in (-0.02, 0.0, 0.02)),
        )
        for i, f in enumerate(factors)
    ]


def replay(series: list[Point], better: str = "higher") -> list[tuple[int, object]]:
    """Each upload's check (one kernel an upload): (upload, change) of every change."""
    return [
        (k, change)
        for k in range(1, len(series) + 1)
        for change in check(series[:k], better=better, settings=Settings(), candidates={k})
    ]


DRIFT = [1.0] * 4 + [0.98**i for i in range(1, 7)]  # the last six kernels each 2 % worse


def test_a_series_two_percent_worse_a_kernel_is_a_drift_raised_once():
    found = replay(points(DRIFT))
    drifts = [(k, c) for k, c in found if c.method == METHOD]
    assert len(drifts) == 1  # the windows after it are the same drift
    upload, drift = drifts[0]
    assert drift.candidate_run_id == upload >= 5  # on its upload's kernel, one of the drift's
    assert drift.status == "confirmed" and drift.direction == "regression"
    assert drift.change_pct < -4 and drift.p_value < Settings().drift_alpha
    assert drift.baseline_run_ids == (max(upload - 9, 1),)  # the window's first kernel
    # no single move stands out: nothing else says so
    assert [c for _, c in found if c.method != METHOD] == []


def test_a_drift_where_lower_is_better_goes_up():
    rising = [1.0] * 3 + [1.02**i for i in range(1, 8)]  # the last seven each 2 % up
    drifts = [c for _, c in replay(points(rising), better="lower") if c.method == METHOD]
    assert [c.direction for c in drifts] == ["regression"] and drifts[0].change_pct > 4


@pytest.mark.parametrize(
    "factors",
    [
        pytest.param([1.0] * 12, id="clean"),
        pytest.param([1.0] * 7 + [0.85] * 5, id="step"),
        pytest.param([1.0] * 11 + [0.8], id="spike on the newest kernel"),
        pytest.param([1.0] * 6 + [0.8] + [1.0] * 5, id="spike"),
    ],
)
def test_a_clean_series_a_step_and_a_spike_are_not_drifts(factors):
    assert [c for _, c in replay(points(factors)) if c.method == METHOD] == []


def test_a_drift_needs_its_window_of_kernels():
    short = points(DRIFT)[-5:]  # five kernels: fewer than drift_min_kernels
    assert [c for _, c in replay(short) if c.method == METHOD] == []


def test_a_drift_under_the_floor_is_not_raised():
    settings = Settings(min_change_pct=20.0)
    series = points(DRIFT)
    found = [
        c
        for k in range(1, len(series) + 1)
        for c in check(series[:k], better="higher", settings=settings, candidates={k})
    ]
    assert [c for c in found if c.method == METHOD] == []
