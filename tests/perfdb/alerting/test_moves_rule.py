"""Which open alert a step placed anew on a neighbouring kernel re-attributes (alert_moves)."""

from __future__ import annotations

from perfdb.alerting.moves_rule import Held, KernelOrder, merged, placed_anew
from perfdb.detector import Change, Point, detection
from tests.perfdb.alerting.step_series import POINTS, STEP_DOWN

# the step scan from six kernels, as these series were drawn for it
STEP_SCAN = detection.Settings(short_kernels=6)


STEP_POINTS = [Point(i + 1, f"2.5.{i + 1}", (), values) for i, values in enumerate(STEP_DOWN)]


def step(run_id: int, *, direction: str = "regression", status: str = "confirmed") -> Change:
    return Change((1,), run_id, -10.0, 0.001, "changepoint", direction, 0.999, status)


def held(key: int, run_id: int, method: str = "changepoint", confirmed: bool = True) -> Held:
    return Held(key, run_id, "regression", method, confirmed)


ORDER = KernelOrder.of(POINTS)


def moves(order: KernelOrder, alerts: list[Held], changes: list[Change]) -> dict[int, Held]:
    """The alerts the changes move (``placed_anew``'s first half)."""
    return placed_anew(order, alerts, changes)[0]


def stays(order: KernelOrder, alerts: list[Held], changes: list[Change]) -> dict[int, Held]:
    """The alerts the changes leave where they are (``placed_anew``'s second half)."""
    return placed_anew(order, alerts, changes)[1]


def test_the_scan_places_the_step_anew_and_the_alert_follows_it():
    before = detection.change_points(STEP_POINTS[:11], better="higher", settings=STEP_SCAN)
    after = detection.change_points(STEP_POINTS[:12], better="higher", settings=STEP_SCAN)
    assert [c.candidate_run_id for c in before] == [10]
    (step,) = after
    assert step.candidate_run_id == 9 and step.location_share > 0.5
    assert step.runner_up is not None and step.runner_up[0] == 10
    positions = KernelOrder.of(STEP_POINTS[:12])
    assert moves(positions, [held(1, 10)], after) == {0: held(1, 10)}
    assert stays(positions, [held(1, 10)], after) == {}


def test_the_alert_stays_where_the_placement_puts_the_step_though_the_scan_moved_it():
    tenth = detection.change_points(POINTS[:10], better="higher", settings=STEP_SCAN)
    eleventh = detection.change_points(POINTS, better="higher", settings=STEP_SCAN)
    assert [c.candidate_run_id for c in tenth] == [8]
    assert [c.candidate_run_id for c in eleventh] == [9]
    (step,) = eleventh
    assert step.runner_up is not None and step.runner_up[0] == 8
    assert step.runner_up[1] > step.location_share  # 2.5.8 reads nearer the new level
    assert moves(KernelOrder.of(POINTS), [held(1, 8)], eleventh) == {}
    assert stays(KernelOrder.of(POINTS), [held(1, 8)], eleventh) == {0: held(1, 8)}


def test_an_alert_moves_only_to_a_neighbouring_kernel():
    assert moves(ORDER, [held(1, 5)], [step(6)]) == {0: held(1, 5)}
    assert moves(ORDER, [held(1, 5)], [step(4)]) == {0: held(1, 5)}
    assert moves(ORDER, [held(1, 5)], [step(7)]) == {}  # two kernels away: another step


def test_an_alert_its_own_check_still_returns_stays_where_it_is():
    assert moves(ORDER, [held(1, 5)], [step(5), step(6)]) == {}


def test_only_confirmed_step_scan_alerts_move_in_their_own_direction():
    assert moves(ORDER, [held(1, 5, confirmed=False)], [step(6)]) == {}  # pending
    assert moves(ORDER, [held(1, 5, method="welch")], [step(6)]) == {}  # A/B, short
    assert moves(ORDER, [held(1, 5)], [step(6, direction="improvement")]) == {}
    assert moves(ORDER, [held(1, 5)], [step(6, status="unconfirmed")]) == {}


def test_a_confirmed_alert_already_on_the_new_kernel_is_updated_instead():
    """Alerts are unique per run and method: a confirmed one there is the step, none moves."""
    assert moves(ORDER, [held(1, 5), held(2, 6)], [step(6)]) == {}
    other_way = Held(2, 6, "improvement", "changepoint", False)  # its (run, method) is taken
    assert moves(ORDER, [held(1, 5), other_way], [step(6)]) == {}


def test_a_pending_or_cleared_alert_on_the_new_kernel_is_merged_into_the_moving_one():
    """It flagged the same step before it was confirmed; confirming it would email the step
    a second time beside the moved alert."""
    for method in ("changepoint", "welch"):
        there = held(2, 6, method=method, confirmed=False)
        assert moves(ORDER, [held(1, 5), there], [step(6)]) == {0: held(1, 5)}
        assert merged([held(1, 5), there], step(6)) == [there]
    assert merged([held(2, 6, confirmed=False)], step(6, direction="improvement")) == []
    # with no confirmed alert next to it to move, the change confirms it as before
    assert moves(ORDER, [held(2, 6, confirmed=False)], [step(6)]) == {}


def test_each_alert_moves_once_and_the_older_of_two_neighbours_first():
    found = moves(ORDER, [held(3, 7), held(1, 5)], [step(6)])
    assert found == {0: held(1, 5)}


def test_patched_runs_are_never_moved_or_moved_to():
    points = [*POINTS[:6], Point(99, "2.5.6", ("O(1)",), (1.0,))]
    order = KernelOrder.of(points)
    assert 99 not in order.keys and order.position(6) == 5
    assert moves(order, [held(1, 99)], [step(6)]) == {}
    assert moves(order, [held(1, 5)], [step(99)]) == {}


# 2.6.0 .. 2.6.19 (runs 1-20), then release candidates of 2.6.10 uploaded since (runs 21-25),
# which sort between 2.6.9 (run 10) and 2.6.10 (run 11); and 2.6.9-rc1 (run 26), between
# 2.6.8 and 2.6.9.
BACKFILLED = [
    *(Point(i + 1, f"2.6.{i}", (), (100.0,)) for i in range(20)),
    *(Point(20 + j, f"2.6.10-rc{j}", (), (100.0,)) for j in range(1, 6)),
    Point(26, "2.6.9-rc1", (), (100.0,)),
]


def placed(run_id: int, seen_through: int | None) -> Held:
    return Held(1, run_id, "regression", "changepoint", True, seen_through)


def test_kernels_uploaded_since_in_the_alerts_gap_are_no_distance():
    """The step confirmed on 2.6.10 when the series ended at 2.6.19 (run 20); five -rc
    kernels uploaded together since place it on 2.6.10-rc3: the same step, placed more
    exactly, three kernels away in today's order but inside the gap 2.6.9 - 2.6.10 the
    alert's placement saw. Before, it was raised (and emailed) a second time."""
    order = KernelOrder.of(BACKFILLED)
    alert = placed(11, seen_through=20)
    assert order.distance(alert, 23) == 0.5  # 2.6.10-rc3, uploaded since
    assert moves(order, [alert], [step(23)]) == {0: alert}
    # an alert from before the watermark (every run counts as seen): three kernels, no move
    assert order.distance(placed(11, None), 23) == 3
    assert moves(order, [placed(11, None)], [step(23)]) == {}


def test_kernels_uploaded_since_further_away_are_another_step():
    order = KernelOrder.of(BACKFILLED)
    alert = placed(11, seen_through=20)
    assert order.distance(alert, 26) == 1.5  # 2.6.9-rc1: the gap before 2.6.9
    assert moves(order, [alert], [step(26)]) == {}
    assert order.distance(alert, 10) == 1  # 2.6.9, which it saw: a neighbour, as before
    assert order.distance(alert, 13) == 2
    # a kernel seen then is counted as a kernel, whatever came since
    assert order.distance(placed(11, seen_through=25), 23) == 3


def test_kernels_appended_after_the_series_move_an_alert_as_before():
    """Uploads in kernel order (the bench's replay): a kernel after every kernel seen is half
    a kernel past the newest one, so only an alert on that newest kernel can move to it, as
    when distance counted every kernel."""
    order = KernelOrder.of(BACKFILLED[:20])
    assert order.distance(placed(19, seen_through=19), 20) == 0.5
    assert order.distance(placed(18, seen_through=19), 20) == 1.5
    assert order.distance(placed(18, None), 20) == 2
