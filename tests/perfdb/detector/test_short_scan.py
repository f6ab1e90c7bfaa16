"""A short series read kernel by kernel (perfdb/detector/short_scan.py): each kernel against
its level so far, as it arrived; steps, returns, spikes and moves still pending."""

import pytest

from perfdb.detector.detection import Point, Settings, detect
from perfdb.detector.noise import trial_noise
from perfdb.detector.points import stock_by_kernel
from perfdb.detector.short_scan import short_scan
from tests.perfdb.detector.seeded import by_run, stock_series


def test_a_short_series_confirms_a_move_on_its_trials_when_it_arrives():
    """Below short_kernels a stock kernel is judged against its level so far, on the trials:
    an A/B of two stock kernels is confirmed with the upload that brings the second."""
    points = stock_series([100.0, 80.0], trials=3, noise_pct=0.5)
    (found,) = detect(points, better="higher", candidates={2})
    assert (found.candidate_run_id, found.status, found.direction) == (2, "confirmed", "regression")
    assert found.baseline_run_ids == (1,) and found.method == "t-test"


def test_the_new_users_sysbench_series_alerts_with_its_second_kernel():
    """events/s 348 +- 17 -> 191 +- 27 -> 140 -> 144, three trials each, one kernel per
    upload: the regression is confirmed with 6.2.0, and the worse kernel after it is never
    a reason to clear it."""
    trials = [
        (351.0, 329.5, 364.0),
        (191.0, 165.0, 218.0),
        (140.5, 131.0, 149.0),
        (144.0, 139.5, 149.5),
    ]
    points = [Point(i + 1, f"6.{i + 1}.0", (), t) for i, t in enumerate(trials)]
    (first,) = detect(points[:2], better="higher", candidates={2})
    assert (first.candidate_run_id, first.status) == (2, "confirmed")
    assert first.change_pct == pytest.approx((191.333 - 348.167) / 348.167 * 100, abs=0.01)
    later = by_run(detect(points[:3], better="higher", candidates={3}))
    assert later[2].status == "confirmed"  # a worse kernel after it never clears it
    assert by_run(detect(points, better="higher"))[2].status == "confirmed"


def test_one_trial_a_kernel_pends_until_the_next_kernel_agrees():
    points = stock_series([100.0, 100.5, 99.6, 80.0], trials=1, noise_pct=0.3)
    (pending,) = detect(points, better="higher", candidates={4})
    assert (pending.candidate_run_id, pending.status) == (4, "unconfirmed")
    stays = stock_series([100.0, 100.5, 99.6, 80.0, 80.3], trials=1, noise_pct=0.3)
    found = by_run(detect(stays, better="higher", candidates={5}))
    assert found[4].status == "confirmed" and found[4].direction == "regression"
    back = stock_series([100.0, 100.5, 99.6, 80.0, 100.2], trials=1, noise_pct=0.3)
    assert 4 not in by_run(detect(back, better="higher", candidates={5}))  # a spike
    assert 4 not in by_run(detect(back, better="higher"))


def test_one_trial_a_step_after_one_kernel_is_confirmed_once_the_new_level_shows_its_noise():
    """A step on the second kernel of a one-trial series: the level before it is one value,
    which may be a bad run; three kernels at the new level (their spread the noise) confirm
    it, two do not."""
    levels = [467.0, 560.0, 580.0, 580.0, 574.0]  # lower is better: a 22 % regression
    two = [Point(i + 1, f"6.{i}.0", (), (v,)) for i, v in enumerate(levels[:3])]
    assert all(c.status != "confirmed" for c in detect(two, better="lower"))
    five = [Point(i + 1, f"6.{i}.0", (), (v,)) for i, v in enumerate(levels)]
    found = by_run(detect(five, better="lower"))
    assert (found[2].status, found[2].direction) == ("confirmed", "regression")
    # the first kernel alone off (a bad first run, the rest one level): never a step there
    flat = [Point(i + 1, f"6.{i}.0", (), (v,)) for i, v in enumerate([560.0, 561.0, 579.0])]
    assert all(c.status != "confirmed" for c in detect(flat, better="lower"))


def test_one_trial_a_pending_move_stays_pending_while_the_kernels_after_it_stay():
    """The kernels after a one-trial move stay at its level but do not yet make it
    significant: the newest kernel's check still returns it pending (not cleared as if the
    series had come back)."""
    levels = [721.0, 768.0, 615.0, 568.0, 601.0]  # higher is better: down 20 % at kernel 3
    points = [Point(i + 1, f"2.6.{i}", (), (v,)) for i, v in enumerate(levels)]
    found = by_run(detect(points, better="higher", candidates={5}))
    assert (found[3].status, found[3].direction) == ("unconfirmed", "regression")


def test_one_trial_a_drop_two_kernels_share_is_pending_not_silent():
    """fio's IOPS on a shared machine, one run a kernel: three noisy kernels, then two at a
    fifth of them. Not significant at the level's budget with three kernels of noise, but
    shared by the two kernels after it: pending at the first low kernel, the level not cut
    (the confirmed steps are the scan's alone); gone when the next kernel comes back."""
    iops = [11194.0, 13515.0, 14251.0, 3000.0, 3000.0]
    points = [Point(i + 1, f"6.13.0-rc{i + 1}", (), (v,)) for i, v in enumerate(iops)]
    assert 4 not in by_run(detect(points[:4], better="higher", candidates={4}))
    found = by_run(detect(points, better="higher", candidates={5}))
    assert (found[4].status, found[4].direction) == ("unconfirmed", "regression")
    assert found[4].change_pct == pytest.approx(-76.9, abs=0.1) and found[4].p_value < 0.006
    kernels = stock_by_kernel(points)
    scan = short_scan(kernels, "higher", Settings(), trial_noise(points, Settings()))
    assert scan.steps == () and [at for at, _, _ in scan.standing] == [3]
    back = [*points, Point(6, "6.13.0-rc6", (), (13000.0,))]
    assert 4 not in by_run(detect(back, better="higher", candidates={6}))


def test_a_step_too_small_for_its_first_kernel_is_found_when_the_next_agree():
    """4 % at 1 % noise is not seen on its first kernel of 3 trials here; once two more
    kernels agree, the cut of the level finds it, on its first kernel, confirmed."""
    levels = [100.0, 100.0, 100.0, 96.0, 96.0, 96.0, 96.0]
    points = stock_series(levels, trials=3, noise_pct=1.0, seed=7)
    kernels = stock_by_kernel(points)
    scan = short_scan(kernels, "higher", Settings(), trial_noise(points, Settings()))
    assert [(at, change.status) for at, _, change in scan.steps] == [(3, "confirmed")]
    found_at = scan.steps[0][1]
    assert found_at > 3  # seen only once later kernels agreed


def test_the_kernel_after_a_spike_is_judged_against_the_level_not_the_spike():
    """In a short series the kernel after a spike came back; judged against the spike it was
    a move, and with the next kernel agreeing a confirmed step on a kernel that is where the
    series always was. A real step after a kernel that did not move is still one."""
    back = stock_series([100.0, 80.0, 100.2, 99.8, 100.1], trials=3, noise_pct=0.5)
    assert detect(back, better="higher", candidates={4}) == []
    assert detect(back, better="higher", candidates={5}) == []
    assert 3 not in by_run(detect(back, better="higher"))
    step = stock_series([100.0, 100.3, 80.0, 80.2, 79.9], trials=3, noise_pct=0.5)
    found = by_run(detect(step, better="higher", candidates={4}))
    assert found[3].status == "confirmed" and found[3].direction == "regression"


def test_the_kernel_after_a_short_excursion_is_not_a_move_in_a_short_series():
    """Below min_kernels too, a level that comes back within three kernels is not two moves
    (``step_scan.came_back`` for longer series): two kernels 20 % high, then back, raise the way
    there and nothing on the way back, where the series always was."""
    back = stock_series([100.0, 120.0, 120.3, 100.2, 99.9], trials=3, noise_pct=0.5)
    assert by_run(detect(back, better="higher", candidates={5})) == {}
    assert 4 not in by_run(detect(back, better="higher"))
    there = by_run(detect(back[:3], better="higher", candidates={3}))
    assert there[2].status == "confirmed" and there[2].direction == "improvement"


def test_a_step_towards_an_early_spikes_level_is_still_a_move():
    """The level a visit started from must be a level: after a spike on kernel 1 and two
    kernels back where the series was, a real step up to the spike's level is a move."""
    step = stock_series([100.0, 120.0, 100.2, 99.9, 120.1, 120.2], trials=3, noise_pct=0.5)
    points = step[:5]
    found = by_run(detect(points, better="higher", candidates={5}))
    assert found[5].status == "confirmed" and found[5].direction == "improvement"
